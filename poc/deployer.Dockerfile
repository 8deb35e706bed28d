# syntax=docker/dockerfile:1.7
#
# The POC deployer: the deployer image (root deployer.Dockerfile) with poc/worker baked into /app.
# Build context is poc/:
#
#   docker build -f deployer.Dockerfile -t celld-deployer:latest .        # once (make deployer-image)
#   docker build -f poc/deployer.Dockerfile -t celld-deployer:poc poc     # make poc-deploy does this
#
# DEPLOYER_IMAGE selects the base, for example a published
# ghcr.io/anthaathi/celld-operator-deployer:<tag>.

ARG DEPLOYER_IMAGE=celld-deployer:latest
FROM ${DEPLOYER_IMAGE}
COPY --chown=65532:65532 worker/ /app/
