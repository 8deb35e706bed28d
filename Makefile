# celld-operator: every developer and CI entry point.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

CARGO ?= cargo
TESTENV := testenv/scripts

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | sed 's/$$(BENCH_FLEETS)/$(BENCH_FLEETS)/' \
	  | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

## Build, generated files and tests ----------------------------------------------------
.PHONY: build manifests verify lint check-structure check-pod-templates test test-unit faults-report check-docs demo demo-down bench
build: ## build every crate (debug)
	$(CARGO) build --workspace --locked

manifests: ## write the CRDs, RBAC, install-operator.yaml and the field reference (docs/reference.md) from the Rust code
	$(CARGO) run -q --locked -p celld-manifests -- config

verify: manifests ## fail when the generated files differ from the checked-in ones
	@if [ -n "$$(git status --porcelain -- config install-operator.yaml docs/reference.md)" ]; then \
	  git --no-pager diff --stat -- config install-operator.yaml docs/reference.md; \
	  echo "generated files are stale: run 'make manifests' and commit the result" >&2; exit 1; \
	fi

lint: ## rustfmt and clippy, warnings are errors
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

check-structure: ## no import circle between the modules of a crate, nor between the top-level folders of its src/ (hack/check-structure.py, after its self-test)
	python3 hack/check-structure.py --self-test
	python3 hack/check-structure.py

check-pod-templates: ## every node pod template golden is recorded, and a changed one comes with its "Upgrading the operator" line (hack/check-pod-templates.py)
	python3 hack/check-pod-templates.py

test: check-sources testenv lint check-structure check-pod-templates verify ## everything: fresh-source check, lints, module structure, drift, unit and integration tests on the local control plane, the object store emulators' semantics, docs and packaging checks
	$(TESTENV)/with-cluster.sh $(SHELL) $(.SHELLFLAGS) '$(MAKE) --no-print-directory check-object-stores && $(CARGO) test --workspace --all-targets --locked'
	$(MAKE) check-docs
	$(MAKE) check-packaging

test-unit: ## the fast tier, no control plane: unit, snapshot and offline CLI tests, manifest drift
	$(CARGO) test --workspace --lib --bins --locked
	$(CARGO) test --locked -p celld-api --test rules_client_side
	$(CARGO) test --locked -p celld-manifests --test drift
	$(CARGO) test --locked -p kubectl-celld --test offline

faults-report: testenv ## run the resilience suite on the local control plane and copy the fault report it measured into faults/ (a test run alone writes it to <cargo target dir>/faults/)
	$(CARGO) build --locked -p kubectl-celld
	@out=$$(mktemp -d); trap 'rm -rf "$$out"' EXIT; \
	CELLD_FAULTS_REPORT_DIR="$$out" $(TESTENV)/with-cluster.sh $(CARGO) test --locked -p celld-operator --test resilience; \
	[ -f "$$out/REPORT.md" ] || { echo "the resilience suite wrote no fault report into $$out" >&2; exit 1; }; \
	rm -f faults/sections/*.md; \
	cp "$$out"/sections/*.md faults/sections/; \
	cp "$$out/REPORT.md" faults/REPORT.md; \
	echo "refreshed faults/REPORT.md and faults/sections/ from this run; review with: git diff -- faults"

check-docs: testenv ## every command shown in README.md and docs/ is a Makefile target, a valid plugin or operator invocation, or a file that exists
	$(CARGO) build --locked -p kubectl-celld -p celld-operator
	python3 hack/check-docs.py

demo: cluster-up ## no Docker: the operator reconciles sample fleets on the local control plane; `kubectl celld deploy` publishes poc/worker (celld-deploy-double stands in for celld), then status and logs, a second deploy, history and status; builds bin/ in the dev profile the tests share (the release plugin: make plugin)
	hack/demo.sh up

demo-down: ## stop the demo operator and delete its namespace
	hack/demo.sh down

BENCH_FLEETS ?= 100 300 1000
FLEETS ?=
bench: testenv ## the operator at scale against a floor (fake nodes calibrated first) for $(BENCH_FLEETS) fleets, the largest count again with nodes that cannot be read (no node answers GET /state), plus a churn, 50 previews of one fleet and a CelldRollout over 200 fleets on two stores, each on a fresh control plane, and the plugin's start-up; writes bench/REPORT.md and bench/scaling.svg; FLEETS=10000 measures that one count alone against its floor into bench/REPORT-10000.md
	$(CARGO) build --release --locked -p celld-operator -p kubectl-celld
	$(CARGO) build --release --locked -p celld-bench
	CELLD_OPERATOR_BIN="$${CARGO_TARGET_DIR:-target}/release/celld-operator" CELLD_PLUGIN_BIN="$${CARGO_TARGET_DIR:-target}/release/kubectl-celld" "$${CARGO_TARGET_DIR:-target}/release/celld-bench" $(if $(FLEETS),--single $(FLEETS),$(BENCH_FLEETS))

## Local control plane (no Docker) --------------------------------------------
.PHONY: testenv check-sources cluster-up cluster-down cluster-up-bare cluster-down-bare test-testkit check-object-stores
testenv: ## build (once, cached outside the repo) the control plane binaries and the object store emulators (S3, GCS, Azure Blob)
	$(TESTENV)/build.sh all

check-sources: ## prepare every Go component's sources (download, copy, patch) in an empty, temporary module cache; no compiling
	$(TESTENV)/build.sh check-sources

cluster-up: testenv ## start etcd, kube-apiserver, controller-manager, scheduler, kwok, the S3, GCS and Azure Blob emulators, an OCI registry and Flux source-controller on 127.0.0.1
	$(TESTENV)/up.sh

cluster-down: ## stop the local control plane and the object store emulators
	$(TESTENV)/down.sh

cluster-up-bare: testenv ## start a second control plane without the Gateway API CRDs and without Flux (state in .testenv-bare/)
	CELLD_TESTENV_DIR="$(CURDIR)/.testenv-bare" CELLD_TESTENV_GATEWAY_API=0 CELLD_TESTENV_FLUX=0 $(TESTENV)/up.sh

cluster-down-bare: ## stop the control plane without the Gateway API CRDs and Flux
	CELLD_TESTENV_DIR="$(CURDIR)/.testenv-bare" $(TESTENV)/down.sh

test-testkit: cluster-up ## test the local control plane itself (celld-testkit's harness tests)
	$(CARGO) test -p celld-testkit

check-object-stores: cluster-up ## the conditional writes and reads the GCS (fake-gcs-server) and Azure Blob (Azurite) emulators honour (about 1 s)
	python3 $(TESTENV)/object-stores.py check

## kubectl plugin ------------------------------------------------------------------
.PHONY: plugin
plugin: ## build the kubectl plugin (release; on Linux static and stripped, at most 15 MiB) into bin/kubectl-celld, with the kubectl_complete-celld link kubectl completes it through; with bin/ on PATH, `kubectl celld` runs it
	@host=$$(rustc -vV | sed -n 's/^host: //p'); \
	case "$$host" in \
	  *-linux-gnu) \
	    echo "building a static binary for $$host"; \
	    RUSTFLAGS="$${RUSTFLAGS:-} -C target-feature=+crt-static" $(CARGO) build --release --locked -p kubectl-celld --target "$$host" || exit 1; \
	    out="$${CARGO_TARGET_DIR:-target}/$$host/release/kubectl-celld" ;; \
	  *) $(CARGO) build --release --locked -p kubectl-celld || exit 1; \
	    out="$${CARGO_TARGET_DIR:-target}/release/kubectl-celld" ;; \
	esac; \
	mkdir -p bin && install -m 0755 "$$out" bin/kubectl-celld && ln -sf kubectl-celld bin/kubectl_complete-celld || exit 1; \
	case "$$host" in *-linux-*) python3 hack/check-static-binary.py bin/kubectl-celld || exit 1 ;; esac
	@echo "built bin/kubectl-celld and bin/kubectl_complete-celld; try: PATH=\$$PWD/bin:\$$PATH kubectl celld --help"

## Packaging, Kind demo and release (Docker and kind only here, never in `make test`) -------
# Section owned by packaging; other targets live above.
DOCKER ?= docker
OPERATOR_DEV_IMAGE ?= celld-operator:dev
DEPLOYER_DEV_IMAGE ?= celld-deployer:latest

.PHONY: check-packaging image deployer-image poc-up poc-deploy poc-check poc-down dist-plugin krew-manifest
check-packaging: ## lint Dockerfiles (hadolint) and workflows (actionlint), bundle and run the POC Worker, check release asset names (no cluster, no Docker)
	hack/check-packaging.sh

image: ## build the operator image for this machine as $(OPERATOR_DEV_IMAGE) (Docker)
	$(DOCKER) build -t $(OPERATOR_DEV_IMAGE) .

deployer-image: ## build the stream-mode deployer (the default image's celld + esbuild + celld-bucket) as $(DEPLOYER_DEV_IMAGE) (Docker)
	$(DOCKER) build -f deployer.Dockerfile -t $(DEPLOYER_DEV_IMAGE) .

poc-up: ## Kind demo: cluster, operator, ingress-nginx, MinIO, bucket, deploy Job, fleets local and local-api (Docker, kind)
	hack/poc.sh up

poc-deploy: ## Kind demo: rebuild the POC deployer with poc/worker and publish it again
	hack/poc.sh deploy

poc-check: ## Kind demo: curl /hello and /api/hello through ingress-nginx and compare the JSON
	hack/poc.sh check

poc-down: ## Kind demo: delete the Kind cluster
	hack/poc.sh down

dist-plugin: ## release helper: build kubectl-celld for this machine into dist/ as kubectl-celld_<os>_<uname -m> (+ .sha256, .tar.gz)
	hack/dist-plugin.sh

krew-manifest: ## release helper: render the krew manifest for VERSION from the archives in dist/ (all four platforms)
	hack/render-krew.sh "$$(tr -d '[:space:]' < VERSION)" dist > dist/celld.yaml
	@echo "wrote dist/celld.yaml"
