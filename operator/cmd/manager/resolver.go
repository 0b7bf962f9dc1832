package main

import (
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/dumpset"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/sourcewatch"
)

// newSourceResolver returns the resolver for trigger.mode=watch: the S3 source watcher
// (internal/source via internal/sourcewatch), which lists the source at each poll and
// yields a revision only for a complete dump set that has settled.
func newSourceResolver() dumpset.Resolver { return sourcewatch.New() }
