# syntax=docker/dockerfile:1
# The operator image: the manager and the workflow's fetch step (rdf-bulkload-fetch), both static
# Go binaries, on a distroless base: no shell, no package manager, non-root (65532).
# `make images` builds it with docker/podman; hack/build-oci-images.sh assembles the same contents
# without a container engine (checked by `make test-images`).
#
# Bases are pinned by tag: their digests could not be verified from the machine this was written
# on (no registry access). Pin them by digest (FROM image:tag@sha256:...) in your build.
ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src/operator
ENV CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOTOOLCHAIN=local
COPY operator/go.mod operator/go.sum ./
RUN go mod download
COPY operator/ ./
RUN go build -trimpath -ldflags "-s -w" -o /out/ ./cmd/manager ./cmd/fetch

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/manager /manager
COPY --from=build /out/fetch /usr/local/bin/rdf-bulkload-fetch
USER 65532:65532
ENTRYPOINT ["/manager"]
