# celld-operator: every developer and CI entry point.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

CARGO ?= cargo
TESTENV := testenv/scripts

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

## Local control plane (no Docker) --------------------------------------------
.PHONY: testenv cluster-up cluster-down
testenv: ## build (once, cached outside the repo) the control plane binaries and the S3 server
	$(TESTENV)/build.sh all

cluster-up: testenv ## start etcd, kube-apiserver, controller-manager, scheduler, kwok and an S3 server on 127.0.0.1
	$(TESTENV)/up.sh

cluster-down: ## stop the local control plane and the S3 server
	$(TESTENV)/down.sh
