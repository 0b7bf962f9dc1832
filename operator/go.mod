module github.com/rdf-bulkload/rdf-bulkload/operator

go 1.26.8
