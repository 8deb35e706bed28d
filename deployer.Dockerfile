# syntax=docker/dockerfile:1.7
#
# The deployer: a celld release binary plus esbuild (and curl), for `celld deploy` Jobs,
# and celld-bucket, the bucket agent `kubectl celld history` and `rollback` run (reads and
# compare-and-swap writes of S3, GCS and Azure Blob buckets with each cloud's credential chain).
# The official celld runtime image has no esbuild, so Worker projects cannot be deployed from it.
#
# ENTRYPOINT is celld and WORKDIR is /app: mount or copy a Worker project (wrangler.jsonc or
# wrangler.json) into /app and run `deploy /app --bucket s3://BUCKET/PREFIX ...`. /app is owned by
# the non-root user so a Worker can also be streamed into a running pod (kubectl celld deploy DIR).
# poc/deployer.Dockerfile builds on this image and bakes poc/worker into /app.
#
#   docker build -f deployer.Dockerfile -t celld-deployer:latest .
#   docker buildx build --platform linux/amd64,linux/arm64 -f deployer.Dockerfile -t ghcr.io/anthaathi/celld-operator-deployer:dev .
#
# CELLD_IMAGE picks the celld: by default the operator's default image (celld_api::DEFAULT_IMAGE);
# a release builds one deployer per supported celld release as well (tag suffix -celld-vX.Y.Z,
# see .github/workflows/release.yml), and `kubectl celld deploy` runs the one of the fleet's
# own release, so the manifest it writes is the one the fleet's nodes read.
#
#   docker build -f deployer.Dockerfile --build-arg CELLD_IMAGE=ghcr.io/denoland/celld:v0.5.1 -t celld-deployer:v0.5.1 .

# A release builds every deployer on its celld by digest (NAME:TAG@sha256:...): for each celld
# release .github/workflows/release.yml resolves the tag with `docker buildx imagetools inspect`,
# checks the digest's form, and passes CELLD_IMAGE=NAME:TAG@DIGEST (and checks this default's
# digest still resolves). hack/check-workflows.py (make check-packaging) refuses a release
# workflow that passes a base image by tag, and this default without its digest.
ARG CELLD_IMAGE=ghcr.io/denoland/celld:v0.6.0@sha256:e188a7f2bb0b8cec9fb04ee4c3d1ed7cca0ea0419519ae2a9ba36e5b6fe5161b
ARG NODE_IMAGE=node:22-bookworm-slim
ARG RUST_VERSION=1.95

# celld-bucket: a static (musl) binary cross-compiled on the build machine's platform with
# cargo-zigbuild, as the operator's Dockerfile builds the operator (the same pins).
FROM --platform=$BUILDPLATFORM rust:${RUST_VERSION}-bookworm AS bucket-agent
ARG ZIG_VERSION=0.14.1
ARG CARGO_ZIGBUILD_VERSION=0.20.1
ARG TARGETARCH
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
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
    --mount=type=cache,target=/src/target,id=celld-bucket-target-${TARGETARCH},sharing=locked \
    target="$(cat /rust-target)" \
 && cargo zigbuild --release --locked --target "${target}" -p celld-bucket-agent --bin celld-bucket \
 && install -D -m 0755 "target/${target}/release/celld-bucket" /out/celld-bucket

# esbuild is a static Go binary published per platform on npm (@esbuild/linux-x64,
# @esbuild/linux-arm64): fetch the one for the target platform without running it.
FROM --platform=$BUILDPLATFORM ${NODE_IMAGE} AS esbuild
ARG ESBUILD_VERSION=0.28.2
ARG TARGETARCH
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
WORKDIR /tmp/esbuild
RUN case "${TARGETARCH}" in \
      amd64) arch=x64 ;; \
      arm64) arch=arm64 ;; \
      *) echo "unsupported TARGETARCH ${TARGETARCH}" >&2; exit 1 ;; \
    esac \
 && npm pack --silent "@esbuild/linux-${arch}@${ESBUILD_VERSION}" \
 && tar -xzf esbuild-linux-*.tgz \
 && install -D -m 0755 package/bin/esbuild /out/bin/esbuild \
 && mkdir -p /out/app

# The official celld release image (debian bookworm-slim, ca-certificates, celld at
# /usr/local/bin/celld) is the base, so the binary is exactly that release for each arch.
FROM ${CELLD_IMAGE}
LABEL org.opencontainers.image.title="celld-operator-deployer" \
      org.opencontainers.image.description="celld, esbuild and celld-bucket, for celld deploy Jobs" \
      org.opencontainers.image.source="https://github.com/anthaathi/celld-operator" \
      org.opencontainers.image.licenses="Apache-2.0"
# curl: `kubectl celld deploy` asks every ready node to adopt the new version at once
# (POST /reload on celld's internal port) from inside this pod. Debian's current curl for the
# base image's release; security updates replace old versions, so it is not pinned.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends curl \
 && rm -rf /var/lib/apt/lists/*
COPY --from=esbuild /out/bin/esbuild /usr/local/bin/esbuild
COPY --from=bucket-agent /out/celld-bucket /usr/local/bin/celld-bucket
COPY --from=esbuild --chown=65532:65532 /out/app /app
ENV CELLD_ESBUILD=/usr/local/bin/esbuild \
    TMPDIR=/tmp \
    HOME=/tmp
USER 65532:65532
WORKDIR /app
ENTRYPOINT ["/usr/local/bin/celld"]
CMD ["deploy", "--help"]
