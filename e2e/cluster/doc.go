// Package cluster is the cluster end-to-end suite of rdf-bulkload (build tag e2e): given a
// kubeconfig and the images, it installs the Helm chart, runs MinIO in the cluster, applies a
// BulkLoad against it, waits for Ready and queries the Fuseki deployment the database was
// handed to. See README.md; run it with `make e2e-cluster`.
package cluster
