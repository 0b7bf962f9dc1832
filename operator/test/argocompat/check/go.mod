module github.com/rdf-bulkload/rdf-bulkload/operator/test/argocompat/check

go 1.26.8
