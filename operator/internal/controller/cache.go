package controller

import (
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
// without managedFields. Whatever else it reads (Secrets, ConfigMaps, the serving
// Deployment or StatefulSet, which are the user's and not labelled by the operator)
// goes through the uncached APIReader. The BulkLoad CRD must be installed when the
// manager is created; Argo's and the snapshot CRDs need not (their informers start
// with their watches, see SetupWithManager).
func CacheOptions() cache.Options {
	return cache.Options{
		DefaultLabelSelector: ChildSelector(),
		DefaultTransform:     cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&rdfv1.BulkLoad{}: {Label: labels.Everything()},
		},
	}
}
