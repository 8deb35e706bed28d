# syntax=docker/dockerfile:1.7
#
# celld-operator: a static (musl) binary on a distroless, non-root runtime image.
#
# Multi-arch without emulation: the build stage always runs on the build machine's platform
# ($BUILDPLATFORM) and cross-compiles for $TARGETARCH with cargo-zigbuild (zig is the C compiler
# and linker, so ring and aws-lc build for either architecture).
#
#   docker build -t celld-operator:dev .
#   docker buildx build --platform linux/amd64,linux/arm64 -t ghcr.io/anthaathi/celld-operator:dev .

ARG RUST_VERSION=1.95
# A release passes RUNTIME_IMAGE by digest (NAME:TAG@sha256:...), resolved from this tag and
# checked by .github/workflows/release.yml, so the image is built on the base that run checked.
ARG RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot

FROM --platform=$BUILDPLATFORM rust:${RUST_VERSION}-bookworm AS build
ARG ZIG_VERSION=0.14.1
ARG CARGO_ZIGBUILD_VERSION=0.20.1
ARG TARGETARCH
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# zig and cargo-zigbuild come from their PyPI wheels, pinned. (python3-venv follows the pinned
# Debian release of the base image; apt version pins go stale as the archive moves on.)
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3-venv \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -m venv /opt/zig \
 && /opt/zig/bin/pip install --no-cache-dir "ziglang==${ZIG_VERSION}" "cargo-zigbuild==${CARGO_ZIGBUILD_VERSION}"
ENV PATH=/opt/zig/bin:$PATH
RUN case "${TARGETARCH}" in \
      amd64) echo x86_64-unknown-linux-musl ;; \
      arm64) echo aarch64-unknown-linux-musl ;; \
      *) echo "unsupported TARGETARCH ${TARGETARCH}" >&2; exit 1 ;; \
    esac > /rust-target \
 && rustup target add "$(cat /rust-target)"
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry,sharing=locked \
    --mount=type=cache,target=/src/target,id=celld-operator-target-${TARGETARCH},sharing=locked \
    target="$(cat /rust-target)" \
 && cargo zigbuild --release --locked --target "${target}" -p celld-operator --bin celld-operator \
 && install -D -m 0755 "target/${target}/release/celld-operator" /out/celld-operator

FROM ${RUNTIME_IMAGE}
LABEL org.opencontainers.image.title="celld-operator" \
      org.opencontainers.image.description="Kubernetes operator for celld fleets" \
      org.opencontainers.image.source="https://github.com/anthaathi/celld-operator" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /out/celld-operator /usr/local/bin/celld-operator
# The distroless "nonroot" user; the Deployment also sets runAsNonRoot and a read-only root.
USER 65532:65532
# Probes on 8080; /metrics over HTTPS on 8443 with METRICS_SECURE=true (the install manifests).
EXPOSE 8080 8443
ENTRYPOINT ["/usr/local/bin/celld-operator"]
