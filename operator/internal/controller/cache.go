package controller

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
)

// ChildSelector selects the objects the operator creates (labelled in internal/specs): its
// Workflows, PVCs and VolumeSnapshots.
func ChildSelector() labels.Selector {
	managed, err := labels.NewRequirement(specs.LabelManagedBy, selection.Equals, []string{specs.ManagedBy})
	if err != nil {
		panic(err) // constant, valid input
	}
	owned, err := labels.NewRequirement(specs.LabelBulkLoad, selection.Exists, nil)
	if err != nil {
		panic(err)
	}
	return labels.NewSelector().Add(*managed, *owned)
}

// CacheOptions keep the manager's cache to what the controller reads through it:
// every BulkLoad, and of every other kind only the operator's children (ChildSelector),
// without managedFields. Deployments and StatefulSets, which may serve a BulkLoad's
// database and are the user's (not labelled by the operator), are watched as metadata
// only, and of that only their identity is kept (identityOnly): enough to map an event
// to the BulkLoads naming the workload. Whatever else it reads (Secrets, ConfigMaps,
// the serving workload itself) goes through the uncached APIReader. The BulkLoad CRD
// must be installed when the manager is created; Argo's and the snapshot CRDs need
// not (their informers start with their watches, see SetupWithManager).
func CacheOptions() cache.Options {
	return cache.Options{
		DefaultLabelSelector: ChildSelector(),
		DefaultTransform:     cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&rdfv1.BulkLoad{}:     {Label: labels.Everything()},
			&appsv1.Deployment{}:  {Label: labels.Everything(), Transform: identityOnly},
			&appsv1.StatefulSet{}: {Label: labels.Everything(), Transform: identityOnly},
		},
	}
}

// identityOnly keeps of a cached object its kind, namespace, name, UID and resource
// version: a chart's Deployment may carry its whole manifest in an annotation.
func identityOnly(in any) (any, error) {
	if m, ok := in.(*metav1.PartialObjectMetadata); ok {
		return &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
			Namespace: m.Namespace, Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion,
		}}, nil
	}
	return in, nil
}
