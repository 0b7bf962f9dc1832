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
test: test-loader ## Run every test suite (what CI runs).

##@ Loader (Rust, loader-image/)

.PHONY: loader
loader: ## Build the rdf-bulkload binary (release).
	cd $(LOADER_DIR) && $(CARGO) build --release --locked

.PHONY: test-loader-unit
test-loader-unit: ## Unit and property tests of the loader crates.
	cd $(LOADER_DIR) && $(CARGO) test --release --locked --workspace

.PHONY: test-loader
test-loader: test-loader-unit ## All loader tests (unit, conformance, fidelity against Jena).

##@ Tooling (installed from package registries into $(RDF_BULKLOAD_CACHE))

.PHONY: tools-jena
tools-jena: ## Jena 5.6.0 + Fuseki server jar from Maven Central.
	bash hack/install-jena.sh

##@ Operator (Go, operator/)
