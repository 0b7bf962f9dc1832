package controller

import (
	"context"
	"fmt"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
)

// reconcileDelete removes a deleted BulkLoad's workflows and build volumes. Its
// snapshots and restored serving volumes stay unless snapshot.onDelete is Delete;
// even then the volume the serving workload mounts is kept, so queries go on.
func (r *BulkLoadReconciler) reconcileDelete(ctx context.Context, bl *rdfv1.BulkLoad) error {
	if !controllerutil.ContainsFinalizer(bl, Finalizer) {
		return nil
	}
	log := ctrl.LoggerFrom(ctx)
	log.Info("deleting: removing workflows and build volumes", "snapshotOnDelete", bl.Spec.Snapshot.OnDelete)
	// A kind the API server does not serve (Argo or the snapshot CRDs not installed)
	// has no objects: the finalizer does not wait for it.
	wfs := &wfv1.WorkflowList{}
	if err := r.listIfServed(ctx, workflowGVK, wfs, bl, "workflows"); err != nil {
		return err
	}
	for i := range wfs.Items {
		if err := r.deleteChild(ctx, &wfs.Items[i]); err != nil {
			return err
		}
	}

	deleteRetained := bl.Spec.Snapshot.OnDelete == rdfv1.SnapshotDelete
	inUse := ""
	if deleteRetained {
		var err error
		if inUse, err = r.servedClaim(ctx, bl); err != nil {
			return err
		}
	}
	pvcs := &corev1.PersistentVolumeClaimList{}
	if err := r.listOwned(ctx, bl, pvcs, "volumes"); err != nil {
		return err
	}
	for i := range pvcs.Items {
		pvc := &pvcs.Items[i]
		switch pvc.Labels[specs.LabelRole] {
		case specs.RoleData, specs.RoleScratch:
		case specs.RoleServing:
			if !deleteRetained || pvc.Name == inUse {
				continue
			}
		default:
			continue
		}
		if err := r.deleteChild(ctx, pvc); err != nil {
			return err
		}
	}

	if deleteRetained {
		vss := &snapv1.VolumeSnapshotList{}
		if err := r.listIfServed(ctx, volumeSnapshotGVK, vss, bl, "snapshots"); err != nil {
			return err
		}
		for i := range vss.Items {
			vs := &vss.Items[i]
			// A volume being restored from a snapshot needs it until it is bound;
			// the in-use volume's snapshot is kept with it.
			if inUse != "" && inUse == specs.ServingClaimName(bl, vs.Annotations[specs.AnnotationRevision]) {
				continue
			}
			if err := r.deleteChild(ctx, vs); err != nil {
				return err
			}
		}
	}

	forgetMetrics(bl)
	r.polls.forget(bl.UID)
	orig := bl.DeepCopy()
	controllerutil.RemoveFinalizer(bl, Finalizer)
	// NotFound: an earlier pass (seen through a stale cache) already let it go. The
	// optimistic lock keeps the patch from dropping a finalizer added meanwhile; a
	// conflict is retried (with the error's backoff) on the fresh object.
	if err := r.Patch(ctx, bl, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("cannot remove the finalizer: %w", err)
	}
	log.Info("deleted: children removed, finalizer released", "servingClaimKept", inUse)
	return nil
}

// servedClaim is the claim the serving workload mounts now ("" without one).
func (r *BulkLoadReconciler) servedClaim(ctx context.Context, bl *rdfv1.BulkLoad) (string, error) {
	if bl.Spec.Serving == nil {
		return "", nil
	}
	obj, tmpl, err := r.servingWorkload(ctx, bl)
	if err != nil || obj == nil {
		return "", err
	}
	return specs.ServedClaim(tmpl, bl.Spec.Serving.VolumeName), nil
}
