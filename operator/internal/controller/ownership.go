package controller

import (
	"context"
	"fmt"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

// listOwned lists the BulkLoad's children of one kind: those with its name label
// (what the cache holds) that this BulkLoad made (specs.OwnedBy, by UID). A BulkLoad
// deleted and recreated under the same name thus never prunes or deletes what the
// earlier one retained. st names the children an older operator made without the UID
// label (snapshots and serving volumes carry no owner reference) that are this
// BulkLoad's: those its status (bl.Status, or the given ones) records.
func (r *BulkLoadReconciler) listOwned(ctx context.Context, bl *rdfv1.BulkLoad, list client.ObjectList, what string, recorded ...*rdfv1.BulkLoadStatus) error {
	if err := r.List(ctx, list, client.InNamespace(bl.Namespace), client.MatchingLabels(specs.SelectorLabels(bl))); err != nil {
		return fmt.Errorf("cannot list %s: %w", what, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return fmt.Errorf("cannot list %s: %w", what, err)
	}
	if len(recorded) == 0 {
		recorded = []*rdfv1.BulkLoadStatus{&bl.Status}
	}
	known := recordedChildren(bl, recorded)
	owned := items[:0]
	for _, o := range items {
		obj, ok := o.(client.Object)
		if ok && specs.OwnedBy(bl, obj, known) {
			owned = append(owned, o)
		}
	}
	return meta.SetList(list, append([]runtime.Object(nil), owned...))
}

// recordedChildren says whether a name is one of the children the statuses record.
func recordedChildren(bl *rdfv1.BulkLoad, statuses []*rdfv1.BulkLoadStatus) func(string) bool {
	names := map[string]bool{}
	for _, st := range statuses {
		names[st.CurrentSnapshot] = true
		names[st.ServingClaim] = true
		for _, rec := range st.Snapshots {
			names[rec.Name] = true
			names[specs.ServingClaimName(bl, rec.Revision)] = true
		}
		for _, rev := range []string{st.SourceRevision, st.LastBuiltRevision} {
			if rev != "" {
				names[specs.SnapshotName(bl, rev)] = true
			}
		}
	}
	delete(names, "")
	return func(name string) bool { return names[name] }
}

// foreignSnapshot is the VolumeSnapshot a build of rev would create when it already
// exists and belongs to an earlier BulkLoad of the same name (retained by its
// snapshot.onDelete): the build must not take it over, since pruning it later would
// delete what that BulkLoad retained. Nil when the name is free or the snapshot is ours.
func (r *BulkLoadReconciler) foreignSnapshot(ctx context.Context, bl *rdfv1.BulkLoad, rev string) (*snapv1.VolumeSnapshot, error) {
	vs := &snapv1.VolumeSnapshot{}
	err := r.Get(ctx, client.ObjectKey{Namespace: bl.Namespace, Name: specs.SnapshotName(bl, rev)}, vs)
	if err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	// One without the UID label is from an older operator, made for this build.
	if specs.OwnedBy(bl, vs, func(string) bool { return true }) {
		return nil, nil
	}
	return vs, nil
}

// snapshotNameTaken ends a build whose snapshot would take over foreign's name (final:
// it stays taken until the user acts).
func snapshotNameTaken(bl *rdfv1.BulkLoad, foreign *snapv1.VolumeSnapshot, rev string) *workflowObservation {
	return &workflowObservation{Done: true, Failure: &rdfv1.BuildFailure{
		Step: specs.StepSnapshot, Reason: status.ReasonSnapshotNameTaken,
		Message: fmt.Sprintf("snapshot %s of revision %s belongs to an earlier BulkLoad named %s (uid %s), which retained it; "+
			"to build it here, change trigger.rebuild: the build then gets a new revision and snapshot name, and that snapshot stays as it is", foreign.Name, rev, bl.Name, foreign.Labels[specs.LabelBulkLoadUID]),
	}}
}
