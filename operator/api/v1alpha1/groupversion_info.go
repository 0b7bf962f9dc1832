// Package v1alpha1 holds the BulkLoad API: one-shot builds of an RDF database
// (Apache Jena TDB2) from S3-compatible object storage.
//
// +kubebuilder:object:generate=true
// +groupName=rdf.bulkload.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "rdf.bulkload.io", Version: "v1alpha1"}

	// SchemeBuilder registers the API's types with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the API's types to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers BulkLoad and its list, and the group version's meta types.
func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &BulkLoad{}, &BulkLoadList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
