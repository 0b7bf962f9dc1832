# rdf-bulkload: one entry point for both halves (loader + operator).
# `make help` lists the targets.

SHELL := /bin/bash
.DEFAULT_GOAL := help

# Heavy, versioned tooling (Jena, envtest, MinIO, helm...) is cached outside the clone.
export RDF_BULKLOAD_CACHE ?= $(HOME)/.cache/rdf-bulkload
CARGO ?= cargo
LOADER_DIR := loader-image
LOADER_BIN := $(LOADER_DIR)/target/release/rdf-bulkload

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} \
	  /^[a-zA-Z0-9_.-]+:.*?##/ { printf "  \033[36m%-22s\033[0m %s\n", $$1, $$2 } \
	  /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

.PHONY: demo
demo: loader tools-jena ## Build the loader, load examples/ into out/demo-db and query it with Jena.
	bash hack/demo.sh

.PHONY: test
test: test-loader test-source test-operator ## Run every test suite (what CI runs).

##@ Loader (Rust, loader-image/)

.PHONY: loader
loader: ## Build the rdf-bulkload binary (release).
	cd $(LOADER_DIR) && $(CARGO) build --release --locked

.PHONY: test-loader-unit
test-loader-unit: ## Unit and property tests of the loader crates.
	cd $(LOADER_DIR) && $(CARGO) test --release --locked --workspace

# Extra pytest options for the fidelity suites, e.g. PYTEST_ARGS="-k w3c -x".
PYTEST_ARGS ?=

.PHONY: test-loader-fidelity
test-loader-fidelity: loader tools-jena tools-python ## Fidelity vs Jena 5.6.0: xloader diff, SPARQL (tdbquery, Fuseki), W3C suites, bad input.
	@eval "$$(bash hack/install-jena.sh)" && eval "$$(bash hack/setup-python.sh)" && \
	cd $(LOADER_DIR)/tests && nice $$RDF_BULKLOAD_PYTHON -m pytest -q $(PYTEST_ARGS)

.PHONY: test-loader
test-loader: test-loader-unit test-loader-fidelity ## All loader tests (unit, conformance, fidelity against Jena).

##@ Tooling (installed from package registries into $(RDF_BULKLOAD_CACHE))

.PHONY: tools-jena
tools-jena: ## Jena 5.6.0 + Fuseki server jar from Maven Central.
	bash hack/install-jena.sh

.PHONY: tools-python
tools-python: ## Python venv for the loader test harness (pytest, requests, rdflib; pinned, PyPI).
	bash hack/setup-python.sh

##@ Benchmarks (bench/, not part of `make test`; see bench/README.md)

BENCH_PYTHON ?= python3
# Extra bench/run.py options, e.g. BENCH_ARGS="--repeat 3" or "--skip tdb2-parallel".
BENCH_ARGS ?=
# rdf-bulkload's --memory for the x50 run: below the size of its dictionary, so the
# spill path is exercised (x50's dictionary: ~5.7 GiB in the loader's accounting, 1.15 GiB
# at x10; its TDB2 term file nodes-data.obj ~2.8 GiB).
BENCH_X50_MEMORY ?= 2G

.PHONY: bench
bench: loader tools-jena ## Full side-by-side benchmark: BSBM x10 (all anchors) and x50 (--memory budget, no xloader).
	$(BENCH_PYTHON) bench/run.py --dataset bsbm-x10,bsbm-x50 --memory bsbm-x50=$(BENCH_X50_MEMORY) \
	  --skip-slow bsbm-x50 $(BENCH_ARGS)

.PHONY: bench-quick
bench-quick: loader tools-jena ## The same benchmark on bsbm-1m only (a few minutes).
	$(BENCH_PYTHON) bench/run.py --dataset bsbm-1m $(BENCH_ARGS)

.PHONY: bench-data
bench-data: ## Make the synthetic x10/x50 scale-ups (cached) and the anchors' venv, run nothing.
	$(BENCH_PYTHON) bench/run.py --dataset bsbm-x10,bsbm-x50 --prepare-only

.PHONY: test-bench
test-bench: ## Self-test of the benchmark harness (ratios, table, RSS-tree polling; seconds).
	@eval "$$(bash hack/setup-python.sh)" && $$RDF_BULKLOAD_PYTHON -m pytest -q bench/test_benchlib.py

##@ Source (fetch + watcher)

SOURCE_PKGS = ./internal/source/... ./internal/fetch/... ./internal/miniotest/... ./cmd/fetch/...

.PHONY: tools-minio
tools-minio: ## MinIO server + mc built from the Go module proxy into $(RDF_BULKLOAD_CACHE) (~3 min cold).
	bash hack/install-minio.sh

.PHONY: fetch
fetch: ## Build the fetch step's binary into bin/rdf-bulkload-fetch.
	cd operator && GOTOOLCHAIN=local GOFLAGS=-buildvcs=false go build -trimpath -o ../bin/rdf-bulkload-fetch ./cmd/fetch

.PHONY: test-source
test-source: ## Fetch step + source watcher tests against a real MinIO server on loopback.
	@eval "$$(bash hack/install-minio.sh)" && cd operator && export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false && \
	go vet $(SOURCE_PKGS) && nice go test -count=1 $(SOURCE_PKGS)

##@ Operator (Go, operator/)

OPERATOR_DIR := operator
CONTROLLER_TOOLS_VERSION ?= v0.23.0
ENVTEST_K8S_VERSION ?= v1.37.1
ENVTEST_ETCD_VERSION ?= v3.7.3
CONTROLLER_GEN = $(RDF_BULKLOAD_CACHE)/operator-tools-$(CONTROLLER_TOOLS_VERSION)/controller-gen
OPERATOR_GO = cd $(OPERATOR_DIR) && GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
# Packages of the BulkLoad API and controller (the fetch step's packages have their own target).
OPERATOR_PKGS = ./api/... ./internal/controller/... ./internal/specs/... ./internal/status/... ./cmd/manager/...
FUZZTIME ?= 15s

.PHONY: operator-tools
operator-tools: ## controller-gen from the Go module proxy into $(RDF_BULKLOAD_CACHE).
	@CONTROLLER_TOOLS_VERSION=$(CONTROLLER_TOOLS_VERSION) bash hack/install-operator-tools.sh >/dev/null

.PHONY: generate
generate: operator-tools ## Regenerate the API's deepcopy functions (controller-gen).
	$(OPERATOR_GO) $(CONTROLLER_GEN) object paths=./api/...

.PHONY: manifests
manifests: operator-tools ## Regenerate the BulkLoad CRD and the manager's RBAC role (controller-gen) under config/.
	$(OPERATOR_GO) $(CONTROLLER_GEN) crd rbac:roleName=manager-role paths=./api/... paths=./internal/controller/... \
	  output:crd:artifacts:config=../config/crd/bases output:rbac:artifacts:config=../config/rbac

.PHONY: verify
verify: operator-tools ## Fail when generated files (CRD, RBAC, deepcopy) are stale.
	@bash hack/verify-operator-generated.sh

.PHONY: operator
operator: ## Build the operator manager binary into bin/manager.
	$(OPERATOR_GO) go build -trimpath -o ../bin/manager ./cmd/manager

.PHONY: test-operator
test-operator: verify ## Operator tests: unit + fuzz + envtest (real kube-apiserver/etcd, Argo + VolumeSnapshot CRDs).
	@assets=$$(K8S_VERSION=$(ENVTEST_K8S_VERSION) ETCD_VERSION=$(ENVTEST_ETCD_VERSION) bash hack/install-envtest.sh) && crds=$$(bash hack/fetch-test-crds.sh) && \
	cd $(OPERATOR_DIR) && export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false KUBEBUILDER_ASSETS=$$assets OPERATOR_TEST_CRDS=$$crds && \
	go vet $(OPERATOR_PKGS) && \
	nice go test -count=1 $(OPERATOR_PKGS) && \
	go test -run '^$$' -fuzz '^FuzzLoaderDefaults$$' -fuzztime $(FUZZTIME) ./api/v1alpha1 && \
	go test -run '^$$' -fuzz '^FuzzWorkflowFromSpec$$' -fuzztime $(FUZZTIME) ./internal/specs
