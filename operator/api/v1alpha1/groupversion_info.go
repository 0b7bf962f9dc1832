// Package v1alpha1 holds the BulkLoad API: one-shot builds of an RDF database
// (Apache Jena TDB2) from S3-compatible object storage.
//
// +kubebuilder:object:generate=true
// +groupName=rdf.bulkload.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "rdf.bulkload.io", Version: "v1alpha1"}

	// SchemeBuilder registers the API's types with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the API's types to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
