# syntax=docker/dockerfile:1.7
#
# The deployer: the celld v0.4.0 release binary plus esbuild (and curl), for `celld deploy` Jobs.
# The official celld runtime image has no esbuild, so Worker projects cannot be deployed from it.
#
# ENTRYPOINT is celld and WORKDIR is /app: mount or copy a Worker project (wrangler.jsonc or
# wrangler.json) into /app and run `deploy /app --bucket s3://BUCKET/PREFIX ...`. /app is owned by
# the non-root user so a Worker can also be streamed into a running pod (kubectl celld deploy DIR).
# poc/deployer.Dockerfile builds on this image and bakes poc/worker into /app.
#
#   docker build -f deployer.Dockerfile -t celld-deployer:latest .
#   docker buildx build --platform linux/amd64,linux/arm64 -f deployer.Dockerfile -t ghcr.io/anthaathi/celld-operator-deployer:dev .

ARG CELLD_IMAGE=ghcr.io/denoland/celld:v0.4.0
ARG NODE_IMAGE=node:22-bookworm-slim

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
# /usr/local/bin/celld) is the base, so the binary is exactly the v0.4.0 release for each arch.
FROM ${CELLD_IMAGE}
LABEL org.opencontainers.image.title="celld-operator-deployer" \
      org.opencontainers.image.description="celld v0.4.0 and esbuild, for celld deploy Jobs" \
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
COPY --from=esbuild --chown=65532:65532 /out/app /app
ENV CELLD_ESBUILD=/usr/local/bin/esbuild \
    TMPDIR=/tmp \
    HOME=/tmp
USER 65532:65532
WORKDIR /app
ENTRYPOINT ["/usr/local/bin/celld"]
CMD ["deploy", "--help"]
