package main

import "github.com/rdf-bulkload/rdf-bulkload/operator/internal/controller"

// newSourceResolver returns the resolver for trigger.mode=watch. Until the source
// watcher (internal/source) is plugged in here, watch-mode BulkLoads are reported
// as Stalled with reason InvalidSpec.
func newSourceResolver() controller.SourceResolver { return nil }
