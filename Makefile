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

# The loader's suites (Rust, Jena, Python) run first, then the Go suites; beside them, in the
# background, tools-go builds what the Go suites need, then the cluster suite and the fuzz check
# run (hack/test-all.sh).
TEST_LOADER_SUITES := lint-rust lint-shell verify-docs test-loader
TEST_BESIDE_SUITES := e2e-cluster-local test-fuzz
TEST_GO_SUITES := lint-go test-source test-operator test-argo-compat test-bench test-chart test-alerts test-e2e-local test-images test-csi-driver

.PHONY: test
test: ## Run every test suite (what CI runs) in two lanes: the Go tools build, then the cluster suite and the fuzz check run, beside the others.
	@MAKE="$(MAKE)" bash hack/test-all.sh "$(TEST_LOADER_SUITES)" "$(TEST_BESIDE_SUITES)" "$(TEST_GO_SUITES)"

##@ Lint and format (every language of the repository)

GOLANGCI_LINT_VERSION ?= v2.15.0
# Every Go module (the operator, the cluster suite, the test CSI driver, hack/promql-names, the
# Argo compatibility checks).
GO_MODULES := $(patsubst %/go.mod,%,$(shell git ls-files '*go.mod'))
# The Argo compatibility checks: the shared check and a module per supported Argo release.
ARGO_COMPAT_MODULES := $(filter operator/test/argocompat/%,$(GO_MODULES))
GO_ENV := GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
SHELL_SCRIPTS := .ci/run $(wildcard hack/*.sh) loader-image/validate/rdf-bulkload-validate

.PHONY: lint
lint: lint-rust lint-go lint-shell verify-docs ## rustfmt --check, clippy -D warnings, gofmt, go vet, golangci-lint, shellcheck, doc paths (make fmt fixes formatting).

.PHONY: lint-rust
lint-rust: ## cargo fmt --check (workspace and fuzz targets), cargo clippy over all targets with -D warnings, layering check (module cycles, long functions).
	cd $(LOADER_DIR) && $(CARGO) fmt --all --check
	cd $(LOADER_DIR)/fuzz && $(CARGO) fmt --all --check
	cd $(LOADER_DIR) && nice $(CARGO) clippy --locked --workspace --all-targets --features rdf-bulkload/failpoints -- -D warnings
	python3 hack/test_check_rust_layering.py
	python3 hack/check-rust-layering.py loader-image/crates

.PHONY: lint-go
lint-go: ## gofmt -l (empty), go vet and golangci-lint (.golangci.yml; built from the Go module proxy) in every Go module.
	@unformatted=$$(gofmt -l $(GO_MODULES)); \
	if [ -n "$$unformatted" ]; then echo "gofmt: not formatted (run make fmt):" >&2; echo "$$unformatted" >&2; exit 1; fi
	@golangci_lint=$$(GOLANGCI_LINT_VERSION=$(GOLANGCI_LINT_VERSION) bash hack/install-golangci-lint.sh) && \
	for m in $(GO_MODULES); do \
	  echo "lint-go: $$m" && \
	  (cd $$m && $(GO_ENV) go vet -tags e2e ./... && $(GO_ENV) nice $$golangci_lint run --config $(CURDIR)/.golangci.yml ./...) || exit 1; \
	done

.PHONY: lint-shell
lint-shell: ## shellcheck (Debian's) over hack/, .ci/run and the validate script.
	@shellcheck=$$(bash hack/install-shellcheck.sh) && $$shellcheck -x $(SHELL_SCRIPTS)

.PHONY: fmt
fmt: ## Format Rust (cargo fmt: workspace and fuzz targets) and Go (gofmt -w, every module).
	cd $(LOADER_DIR) && $(CARGO) fmt --all
	cd $(LOADER_DIR)/fuzz && $(CARGO) fmt --all
	gofmt -w $(GO_MODULES)

##@ Loader (Rust, loader-image/)

.PHONY: loader
loader: ## Build the rdf-bulkload binary (release).
	cd $(LOADER_DIR) && $(CARGO) build --release --locked

# (Jena first: tdb2-nodeid's differential test runs Jena, and fails without it under CI=true)
.PHONY: test-loader-unit
test-loader-unit: tools-jena ## Unit and property tests of the loader crates, and the kill/resume tests (crash points built in).
	cd $(LOADER_DIR) && $(CARGO) test --release --locked --workspace --features rdf-bulkload/failpoints --target-dir target/failpoints

# Extra pytest options for the fidelity suites, e.g. PYTEST_ARGS="-k w3c -x".
PYTEST_ARGS ?=

.PHONY: test-loader-fidelity
test-loader-fidelity: loader tools-jena tools-python ## Fidelity vs Jena 5.6.0: xloader diff, SPARQL (tdbquery, Fuseki), W3C suites, bad input.
	@eval "$$(bash hack/install-jena.sh)" && eval "$$(bash hack/setup-python.sh)" && \
	cd $(LOADER_DIR)/tests && nice $$RDF_BULKLOAD_PYTHON -m pytest -q --ignore=ops $(PYTEST_ARGS)

# The loader with crash and delay points (feature failpoints), in a target directory of its
# own so that the shipped binary never has them; test-loader-unit builds the same.
LOADER_FP_BIN := $(LOADER_DIR)/target/failpoints/release/rdf-bulkload

.PHONY: loader-failpoints
loader-failpoints: ## The loader with crash/delay points (feature failpoints) for fault tests; never shipped.
	cd $(LOADER_DIR) && $(CARGO) build --release --locked -p rdf-bulkload --features failpoints --target-dir target/failpoints

.PHONY: test-loader-ops
test-loader-ops: loader loader-failpoints tools-python ## Operations: plan, progress (bars, JSON), metrics, failure modes (damaged input, full disk, small budget).
	@eval "$$(bash hack/setup-python.sh)" && cd $(LOADER_DIR)/tests && \
	RDF_BULKLOAD_FAILPOINTS=$(abspath $(LOADER_FP_BIN)) nice $$RDF_BULKLOAD_PYTHON -m pytest -q ops $(PYTEST_ARGS)

.PHONY: test-loader
test-loader: test-loader-unit test-loader-ops test-loader-fidelity ## All loader tests (unit, operations, conformance, fidelity against Jena).

# Fuzzing (loader-image/fuzz/): the input layer and the B+Tree packer, see hack/fuzz.sh.
# Seconds per target for `make fuzz`; FUZZ_TARGETS picks targets (default: all).
FUZZ_SECONDS ?= 300
FUZZ_TARGETS ?=

.PHONY: fuzz-build
fuzz-build: ## Build the loader's fuzz targets (cargo-fuzz from crates.io into $(RDF_BULKLOAD_CACHE)).
	bash hack/fuzz.sh build

.PHONY: test-fuzz
test-fuzz: fuzz-build ## Fuzz targets: a fixed, seeded number of inputs each, from the committed seeds (~2.5 min).
	bash hack/fuzz.sh check $(FUZZ_TARGETS)

.PHONY: fuzz
fuzz: fuzz-build ## Fuzz for FUZZ_SECONDS per target, growing loader-image/fuzz/corpus/ (FUZZ_TARGETS=...).
	bash hack/fuzz.sh run $(FUZZ_SECONDS) $(FUZZ_TARGETS)

##@ Tooling (installed from package registries into $(RDF_BULKLOAD_CACHE))

.PHONY: tools-go
# Not here, so that the cluster suite (after tools-go in make test's background lane) starts
# sooner: golangci-lint and the Argo compatibility modules, which only the foreground's lint-go
# and test-argo-compat need (they build them themselves).
tools-go: tools-minio tools-helm operator-tools ## Every Go-built tool of the operator and cluster suites, and the other Go modules' dependencies (compiled by go vet), built ahead (idempotent; ~15 s warm).
	@K8S_VERSION=$(ENVTEST_K8S_VERSION) ETCD_VERSION=$(ENVTEST_ETCD_VERSION) bash hack/install-kube.sh >/dev/null
	@bash hack/fetch-test-crds.sh >/dev/null
	@bash hack/install-prometheus.sh >/dev/null
	@bash hack/install-cluster-components.sh >/dev/null
	@for m in $(filter-out $(ARGO_COMPAT_MODULES),$(GO_MODULES)); do (cd $$m && $(GO_ENV) nice go vet -tags e2e ./...) || exit 1; done

.PHONY: tools-jena
tools-jena: ## Jena 5.6.0 + Fuseki server jar, and Jena 6.2.0 (its Fuseki server jar; run with the machine's Java 21+), from Maven Central.
	bash hack/install-jena.sh
	JENA_VERSION=6.2.0 bash hack/install-jena.sh >/dev/null

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
BENCH_X50_MEMORY ?= 2Gi

# Where bench/run.py keeps the scale-ups it makes (bench-formats reads x10 from there).
BENCH_DATA ?= $(or $(RDF_BULKLOAD_CACHE),$(HOME)/.cache/rdf-bulkload)/bench-data

# Triples of the generated Wikidata-shaped dump of bench-wikidata (1e6, 10^7, 100000000, ...).
BENCH_WIKIDATA_TRIPLES ?= 10^8
# Extra bench/run.py options for it, e.g. BENCH_WIKIDATA_ARGS="--wikidata-seed 2".
BENCH_WIKIDATA_ARGS ?=

.PHONY: bench
bench: loader tools-jena ## Everything, side by side: loaders on BSBM x10 (all anchors) and x50 (--memory budget), formats and threads on x10, queries, the Wikidata-shaped dump.
	$(BENCH_PYTHON) bench/run.py --dataset bsbm-x10,bsbm-x50 --memory bsbm-x50=$(BENCH_X50_MEMORY) \
	  --skip-slow bsbm-x50 $(BENCH_ARGS)
	$(BENCH_PYTHON) bench/formats.py --dataset $(BENCH_DATA)/bsbm-x10.nt.gz --memory 4Gi $(BENCH_FORMATS_ARGS)
	$(BENCH_PYTHON) bench/queries.py $(BENCH_QUERIES_ARGS)
	$(MAKE) --no-print-directory bench-wikidata

.PHONY: bench-wikidata
bench-wikidata: loader tools-jena ## A generated Wikidata-shaped Turtle dump of BENCH_WIKIDATA_TRIPLES (default 10^8): rdf-bulkload, tdb2.xloader, Oxigraph --lenient, gzip floor.
	$(BENCH_PYTHON) bench/run.py --dataset wikidata-$(BENCH_WIKIDATA_TRIPLES) \
	  --tools gzip-floor,rdf-bulkload,tdb2-xloader,oxigraph $(BENCH_WIKIDATA_ARGS)

.PHONY: bench-quick
bench-quick: loader tools-jena ## The same benchmark on bsbm-1m only (a few minutes).
	$(BENCH_PYTHON) bench/run.py --dataset bsbm-1m $(BENCH_ARGS)

.PHONY: bench-queries
bench-queries: loader tools-jena ## Query speed: BSBM explore queries on our database, xloader's, and ours without stats.opt (Fuseki, tdbquery).
	$(BENCH_PYTHON) bench/queries.py $(BENCH_QUERIES_ARGS)

.PHONY: bench-formats
bench-formats: loader ## Load speed by format (nt.gz, nt.bz2, one ttl.gz, one ttl.bz2) and threads (1, all) beside gzip/bzip2/lbzip2 alone.
	$(BENCH_PYTHON) bench/formats.py $(BENCH_FORMATS_ARGS)

.PHONY: bench-data
bench-data: ## Make the synthetic x10/x50 scale-ups (cached) and the anchors' venv, run nothing.
	$(BENCH_PYTHON) bench/run.py --dataset bsbm-x10,bsbm-x50 --prepare-only

.PHONY: test-bench
test-bench: ## Self-test of the benchmark harnesses (ratios, tables, RSS-tree polling, join-order parsing, query verdicts; seconds).
	@eval "$$(bash hack/setup-python.sh)" && $$RDF_BULKLOAD_PYTHON -m pytest -q bench/test_benchlib.py bench/test_queries.py

##@ Source (fetch + watcher)

SOURCE_PKGS = ./internal/source/... ./internal/fetch/... ./internal/miniotest/... ./cmd/fetch/... ./internal/sourcewatch/...

.PHONY: tools-minio
tools-minio: ## MinIO server + mc built from the Go module proxy into $(RDF_BULKLOAD_CACHE) (~3 min cold).
	bash hack/install-minio.sh

.PHONY: fetch
fetch: ## Build the fetch step's binary into bin/rdf-bulkload-fetch.
	cd operator && GOTOOLCHAIN=local GOFLAGS=-buildvcs=false go build -trimpath -o ../bin/rdf-bulkload-fetch ./cmd/fetch

.PHONY: test-source
test-source: ## Fetch step + source watcher tests: a real MinIO on loopback; the watch trigger also with envtest.
	@eval "$$(bash hack/install-minio.sh)" && \
	assets=$$(K8S_VERSION=$(ENVTEST_K8S_VERSION) ETCD_VERSION=$(ENVTEST_ETCD_VERSION) bash hack/install-kube.sh) && crds=$$(bash hack/fetch-test-crds.sh) && \
	cd operator && export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false KUBEBUILDER_ASSETS=$$assets OPERATOR_TEST_CRDS=$$crds && \
	go vet $(SOURCE_PKGS) && nice go test -count=1 $(SOURCE_PKGS)

##@ Operator (Go, operator/)

OPERATOR_DIR := operator
CONTROLLER_TOOLS_VERSION ?= v0.23.0
ENVTEST_K8S_VERSION ?= v1.37.1
ENVTEST_ETCD_VERSION ?= v3.7.3
CONTROLLER_GEN = $(RDF_BULKLOAD_CACHE)/operator-tools-$(CONTROLLER_TOOLS_VERSION)/controller-gen
KUSTOMIZE = $(RDF_BULKLOAD_CACHE)/operator-tools-$(CONTROLLER_TOOLS_VERSION)/kustomize
OPERATOR_GO = cd $(OPERATOR_DIR) && GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
# Packages of the BulkLoad API and controller (the fetch step's packages have their own target).
OPERATOR_PKGS = ./api/... ./internal/controller/... ./internal/crdcheck/... ./internal/dumpset/... ./internal/specs/... ./internal/status/... ./cmd/manager/...
# Fuzzing runs a fixed number of inputs (not a duration): the same work on any machine.
FUZZTIME ?= 40000x

.PHONY: operator-tools
operator-tools: ## controller-gen and kustomize from the Go module proxy into $(RDF_BULKLOAD_CACHE).
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

.PHONY: verify-docs
verify-docs: ## Fail when README.md, CONTRIBUTING.md, CHANGELOG.md or docs/*.md name a repository path that does not exist.
	@bash hack/check-doc-paths.sh

# The load step's command line for a matrix of specs (specs.LoaderArgs), the contract that the
# loader's parser and the e2e scripts read (see CONTRIBUTING.md).

.PHONY: generate-loader-args
generate-loader-args: ## Rewrite the load step's command-line golden file from specs.LoaderArgs.
	$(OPERATOR_GO) go test -count=1 ./internal/specs -run '^TestLoaderArgsGolden$$' -update

.PHONY: verify-loader-args
verify-loader-args: ## Fail when the load step's command-line golden file differs from specs.LoaderArgs, or the loader's parser reads it otherwise.
	$(OPERATOR_GO) go test -count=1 ./internal/specs -run '^TestLoaderArgsGolden$$'
	cd $(LOADER_DIR) && $(CARGO) test --locked -q -p rdf-bulkload --bin rdf-bulkload loader_args

# The Workflows the operator writes for a matrix of BulkLoads (specs.Workflow), which every
# supported Argo Workflows release must read (test-argo-compat; see docs/argo-and-crds.md).

.PHONY: generate-workflows
generate-workflows: ## Rewrite the golden file of the Workflows the operator writes from specs.Workflow.
	$(OPERATOR_GO) go test -count=1 ./internal/specs -run '^TestWorkflowsGolden$$' -update

.PHONY: verify-workflows
verify-workflows: ## Fail when the golden file of the Workflows the operator writes differs from specs.Workflow.
	$(OPERATOR_GO) go test -count=1 ./internal/specs -run '^TestWorkflowsGolden$$'

.PHONY: generate-all
generate-all: generate manifests chart-sync generate-loader-args generate-workflows ## Regenerate every generated file (deepcopy, CRD, RBAC, the chart's copies and snapshots, the load step's golden file, the Workflows' golden file).

.PHONY: verify-all
verify-all: verify verify-chart verify-loader-args verify-workflows verify-docs ## Fail when any generated file is stale or a doc names a missing path (test-chart checks the chart's snapshots).

.PHONY: operator
operator: ## Build the operator manager binary into bin/manager.
	$(OPERATOR_GO) go build -trimpath -o ../bin/manager ./cmd/manager

.PHONY: test-operator
test-operator: verify tools-helm ## Operator tests: unit + fuzz + envtest (real kube-apiserver/etcd, Argo + VolumeSnapshot CRDs; the chart's CRD through real helm).
	@assets=$$(K8S_VERSION=$(ENVTEST_K8S_VERSION) ETCD_VERSION=$(ENVTEST_ETCD_VERSION) bash hack/install-kube.sh) && crds=$$(bash hack/fetch-test-crds.sh) && \
	cd $(OPERATOR_DIR) && export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false KUBEBUILDER_ASSETS=$$assets OPERATOR_TEST_CRDS=$$crds KUSTOMIZE=$(KUSTOMIZE) HELM=$(HELM) && \
	go vet $(OPERATOR_PKGS) && \
	nice go test -count=1 $(OPERATOR_PKGS) && \
	go test -run '^$$' -fuzz '^FuzzLoaderDefaults$$' -fuzztime $(FUZZTIME) ./api/v1alpha1 && \
	go test -run '^$$' -fuzz '^FuzzWorkflowFromSpec$$' -fuzztime $(FUZZTIME) ./internal/specs

.PHONY: test-argo-compat
test-argo-compat: verify-workflows ## The Workflows the operator writes decoded strictly (unknown fields refused) by the Workflow types of Argo v3.5, v3.6, v3.7 and v4.0.
	@[ -n "$(ARGO_COMPAT_MODULES)" ] || { echo "test-argo-compat: no module under operator/test/argocompat (git ls-files)" >&2; exit 1; }
	@for m in $(ARGO_COMPAT_MODULES); do \
	  echo "test-argo-compat: $$m" && \
	  (cd $$m && $(GO_ENV) go vet ./... && $(GO_ENV) nice go test -count=1 ./...) || exit 1; \
	done

##@ Packaging and end-to-end

HELM_VERSION ?= v3.22.0
HELM = $(RDF_BULKLOAD_CACHE)/helm-$(HELM_VERSION)/helm
CHART_DIR := charts/rdf-bulkload
# Where images-oci writes the OCI archives, and the names/tags `make images` gives the images.
IMAGES_DIR ?= out/images
IMAGE_TAG ?= 0.1.0
OPERATOR_IMAGE ?= ghcr.io/rdf-bulkload/rdf-bulkload-operator:$(IMAGE_TAG)
LOADER_IMAGE ?= ghcr.io/rdf-bulkload/rdf-bulkload-loader:$(IMAGE_TAG)
E2E_GO = cd e2e && GOTOOLCHAIN=local GOFLAGS=-buildvcs=false

.PHONY: tools-helm
tools-helm: ## helm built from the Go module proxy into $(RDF_BULKLOAD_CACHE) (~2 min cold).
	@HELM_VERSION=$(HELM_VERSION) bash hack/install-helm.sh >/dev/null

.PHONY: chart-sync
chart-sync: tools-helm ## Copy the generated CRD and manager RBAC rules from config/ into the chart; refresh its snapshots.
	cp config/crd/bases/rdf.bulkload.io_bulkloads.yaml $(CHART_DIR)/files/crd-bulkloads.yaml
	cp config/rbac/role.yaml $(CHART_DIR)/files/manager-role.yaml
	@HELM=$(HELM) python3 $(CHART_DIR)/tests/test_chart.py --update | tail -1

.PHONY: verify-chart
verify-chart: ## Fail when the chart's copy of the CRD or RBAC rules is stale (see chart-sync).
	@cmp -s config/crd/bases/rdf.bulkload.io_bulkloads.yaml $(CHART_DIR)/files/crd-bulkloads.yaml && \
	 cmp -s config/rbac/role.yaml $(CHART_DIR)/files/manager-role.yaml || \
	 { echo "the chart's CRD/RBAC copy differs from config/: run 'make chart-sync' and commit" >&2; exit 1; }

.PHONY: test-chart
test-chart: tools-helm verify-chart ## Chart tests: helm lint, helm template snapshots, rendered-object and schema checks.
	HELM=$(HELM) python3 $(CHART_DIR)/tests/test_chart.py

.PHONY: test-alerts
test-alerts: tools-helm loader ## Chart alerts + dashboard: promtool check/test rules, every PromQL expression parses, every metric name served by a real scrape (operator envtest, fetch, loader).
	HELM=$(HELM) bash hack/test-alerts.sh

.PHONY: alert-metric-names
alert-metric-names: tools-helm ## Print the metric names the chart's alerts and dashboard use (parsed with Prometheus' parser), one per line.
	@HELM=$(HELM) bash hack/test-alerts.sh --names

.PHONY: chart-snapshots
chart-snapshots: tools-helm ## Rewrite the chart's helm-template snapshots (review the diff before committing).
	HELM=$(HELM) python3 $(CHART_DIR)/tests/test_chart.py --update

.PHONY: test-e2e-local
test-e2e-local: loader fetch tools-jena tools-minio ## Data path: MinIO -> fetch -> load -> validate -> Fuseki; SPARQL == Jena's own load.
	@eval "$$(bash hack/install-minio.sh)" && eval "$$(bash hack/install-jena.sh)" && \
	export RDF_BULKLOAD_MINIO JENA_HOME RDF_BULKLOAD_FUSEKI_JAR && nice python3 e2e/local/e2e_local.py

.PHONY: e2e-local
e2e-local: test-e2e-local ## Same as test-e2e-local.

.PHONY: images-oci
images-oci: loader tools-jena ## Assemble the operator and loader images as OCI archives in $(IMAGES_DIR) (no container engine).
	IMAGE_TAG=$(IMAGE_TAG) bash hack/build-oci-images.sh $(IMAGES_DIR)

.PHONY: test-images
test-images: images-oci ## Check the OCI archives: files, entrypoint, non-root user, no shell in the operator image, binaries run.
	python3 hack/test_oci_images.py $(IMAGES_DIR)

.PHONY: images
images: ## Build both images with docker/podman when an engine runs, else as OCI archives (images-oci).
	@if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then engine=docker; \
	elif command -v podman >/dev/null 2>&1 && podman info >/dev/null 2>&1; then engine=podman; fi; \
	if [ -n "$$engine" ]; then \
	  $$engine build -t $(OPERATOR_IMAGE) -f Dockerfile . && \
	  $$engine build -t $(LOADER_IMAGE) -f loader-image/Dockerfile loader-image; \
	else echo "no container engine: assembling OCI archives instead" >&2; $(MAKE) images-oci; fi

# The cluster suite's dumps: BSBM 1M from ../shared/datasets when it is there (as e2e-local),
# else the suite's default, the examples/ catalogue.
SHARED_DATASETS ?= $(abspath ../shared/datasets)
E2E_DATA_NT ?= $(wildcard $(SHARED_DATASETS)/bsbm-1m.nt.gz)
E2E_DATA_NQ ?= $(wildcard $(SHARED_DATASETS)/bsbm-1m-ng.nq.gz)
export E2E_DATA_NT E2E_DATA_NQ

# the cluster suite's tests to run (go test -run): all of them; E2E_SKIP (go test -skip) is the
# only way to leave one out: a test whose cluster or settings are missing fails
E2E_RUN ?= .
E2E_SKIP ?=

.PHONY: test-e2e-cluster-build
test-e2e-cluster-build: ## Build and vet the cluster suite (build tag e2e) without running it.
	$(E2E_GO) go vet -tags e2e ./... && go test -tags e2e -count=1 -run '^$$' ./...

.PHONY: e2e-cluster
e2e-cluster: tools-helm tools-jena test-e2e-cluster-build ## Cluster suite against KUBECONFIG (images in the cluster; see e2e/cluster/README.md).
	@eval "$$(bash hack/install-jena.sh)" && export JENA_HOME RDF_BULKLOAD_FUSEKI_JAR && \
	kubectl=$$(bash hack/install-kube.sh)/kubectl && \
	$(E2E_GO) HELM=$(HELM) KUBECTL=$${KUBECTL:-$$kubectl} go test -tags e2e -count=1 -timeout 80m -v -run '$(E2E_RUN)' $(if $(E2E_SKIP),-skip '$(E2E_SKIP)') ./cluster

.PHONY: local-cluster-up
local-cluster-up: images-oci ## A real single-node cluster on this machine with the images imported (root; see hack/local-cluster.sh).
	bash hack/local-cluster.sh up

.PHONY: local-cluster-down
local-cluster-down: ## Stop the local cluster and remove everything it created.
	bash hack/local-cluster.sh down

.PHONY: e2e-cluster-local
e2e-cluster-local: images-oci tools-helm tools-jena ## local-cluster-up, the cluster suite against it, local-cluster-down (also on failure).
	bash hack/e2e-cluster-local.sh

.PHONY: test-csi-driver
test-csi-driver: ## The local cluster's test-only CSI driver: the CSI sanity suite (csi-test) against it.
	cd e2e/csi-hostpath && GOTOOLCHAIN=local GOFLAGS=-buildvcs=false go vet ./... && nice go test -count=1 ./...
