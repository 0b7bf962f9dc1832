package controller

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
)

// prune picks what retention no longer needs: finished workflows but the last,
// build volumes of builds that are over, snapshots beyond snapshot.keep (but a
// pinned one) and the restored volumes the serving workload no longer needs. They are deleted only after the status
// patch succeeded, so a pass working from a stale cache deletes nothing.
func (r *BulkLoadReconciler) prune(ctx context.Context, s *scope) error {
	bl, st := s.bl, &s.bl.Status
	keep := bl.Spec.Snapshot.EffectiveKeep()
	pin := pinnedSnapshot(bl)
	if len(st.Snapshots) > keep {
		st.Snapshots = keepPinned(st.Snapshots[:keep], st.Snapshots, pin)
	}
	retained := map[string]bool{} // short revisions whose snapshot is kept
	for _, rec := range st.Snapshots {
		retained[specs.ShortRevision(rec.Revision)] = true
	}
	building := ""
	if st.SourceRevision != "" {
		building = specs.ShortRevision(st.SourceRevision)
	}
	kept := r.keptRevision(ctx, s)
	wfs := &wfv1.WorkflowList{}
	if err := r.listOwned(ctx, bl, wfs, "workflows", &s.before, st); err != nil {
		return err
	}
	for i := range wfs.Items {
		wf := &wfs.Items[i]
		// Kept: the last workflow, and every attempt of the running build (their
		// failed pods hold the logs of why a retry was needed).
		if (st.Workflow != nil && wf.Name == st.Workflow.Name) || (building != "" && wf.Labels[specs.LabelRevision] == building) {
			continue
		}
		s.pruneLater(wf)
	}

	vss := &snapv1.VolumeSnapshotList{}
	if err := r.listOwned(ctx, bl, vss, "snapshots", &s.before, st); err != nil {
		return err
	}
	for i := range vss.Items {
		vs := &vss.Items[i]
		rev := vs.Labels[specs.LabelRevision]
		if retained[rev] || rev == building || vs.Name == pin {
			continue
		}
		if s.pruneLater(vs) {
			r.event(s, corev1.EventTypeNormal, "SnapshotPruned", "snapshot %s is beyond snapshot.keep=%d", vs.Name, keep)
		}
	}

	pvcs := &corev1.PersistentVolumeClaimList{}
	if err := r.listOwned(ctx, bl, pvcs, "volumes", &s.before, st); err != nil {
		return err
	}
	for i := range pvcs.Items {
		pvc := &pvcs.Items[i]
		rev := pvc.Labels[specs.LabelRevision]
		switch pvc.Labels[specs.LabelRole] {
		case specs.RoleData, specs.RoleScratch:
			if rev == building || rev == kept {
				continue
			}
		case specs.RoleServing:
			// A restored volume is the size of the database: only the one the workload
			// mounts is kept, and while it rolls over, also those its old pods may still
			// mount. A rollback restores another from its snapshot.
			if pvc.Name == st.ServingClaim || !s.servingSettled {
				continue
			}
		default:
			continue
		}
		s.pruneLater(pvc)
	}
	return nil
}

// keptRevision is the short revision whose failed build's volumes are still kept
// ("" when none are); past spec.retry.keepFailedVolumesFor they are let go.
func (r *BulkLoadReconciler) keptRevision(ctx context.Context, s *scope) string {
	st := &s.bl.Status
	kv := st.KeptVolumes
	if kv == nil {
		return ""
	}
	if s.now.Before(kv.Until.Time) {
		s.requeue(kv.Until.Sub(s.now))
		return specs.ShortRevision(kv.Revision)
	}
	ctrl.LoggerFrom(ctx).Info("the failed build's kept volumes expire (spec.retry.keepFailedVolumesFor)", "revision", kv.Revision, "claims", kv.Claims, "until", kv.Until.Time)
	r.event(s, corev1.EventTypeNormal, "FailedVolumesPruned", "volumes %s kept since the build of revision %s failed are deleted: spec.retry.keepFailedVolumesFor has passed",
		strings.Join(kv.Claims, ", "), kv.Revision)
	st.KeptVolumes = nil
	return ""
}

func (r *BulkLoadReconciler) deleteChild(ctx context.Context, obj client.Object) error {
	if !obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	if err := r.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("cannot delete %s %s: %w", kindOf(obj), obj.GetName(), err)
	}
	return nil
}

// kindOf names a typed object's kind (objects read by a typed client carry no TypeMeta).
func kindOf(obj client.Object) string {
	return reflect.TypeOf(obj).Elem().Name()
}
