package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

// ensureBuildVolumes makes sure the running build's data and scratch volumes exist
// before an attempt's workflow is created: kept volumes of an earlier attempt are
// used as they are (the load resumes on them), a scratch volume smaller than
// database.scratchSize is expanded, and a volume still being deleted (pruned, or
// given up with a lost node) is waited for. False when the workflow must wait.
func (r *BulkLoadReconciler) ensureBuildVolumes(ctx context.Context, s *scope) (bool, error) {
	bl, st := s.bl, &s.bl.Status
	for _, want := range []*corev1.PersistentVolumeClaim{specs.DataClaim(bl, st.SourceRevision), specs.ScratchClaim(bl, st.SourceRevision)} {
		have := &corev1.PersistentVolumeClaim{}
		err := r.Get(ctx, client.ObjectKeyFromObject(want), have)
		switch {
		case apierrors.IsNotFound(err):
			if _, err := r.createIfMissing(ctx, want); err != nil {
				return false, fmt.Errorf("cannot create volume %s: %w", want.Name, err)
			}
		case err != nil:
			return false, fmt.Errorf("cannot read volume %s: %w", want.Name, err)
		case !have.DeletionTimestamp.IsZero():
			// Owned, so watched: its deletion brings the BulkLoad back.
			s.progress(rdfv1.PhasePending, status.ReasonBuilding, "attempt %d of revision %s waits for the old volume %s to be deleted "+
				"(a volume on a node that is gone is released once Kubernetes removes that node's pods: delete the Node, or taint it node.kubernetes.io/out-of-service, if it will not return)",
				st.Attempt, st.SourceRevision, have.Name)
			s.requeue(restoredClaimRecheck)
			s.stop = true
			return false, nil
		case have.Labels[specs.LabelRole] == specs.RoleScratch:
			if ok, err := r.growScratch(ctx, s, have, want); err != nil || !ok {
				return false, err
			}
		}
	}
	return true, nil
}

// growScratch expands a kept scratch volume to a larger database.scratchSize, in place,
// when its StorageClass allows volume expansion. The operator does not replace the
// volume by itself: it holds the loader's checkpoint and the fetched inputs, the work
// keeping it was for. Where the class cannot expand, the build fails with
// ScratchNotExpandable, saying what to do.
func (r *BulkLoadReconciler) growScratch(ctx context.Context, s *scope, have, want *corev1.PersistentVolumeClaim) (bool, error) {
	st := &s.bl.Status
	log := ctrl.LoggerFrom(ctx)
	size, need := have.Spec.Resources.Requests[corev1.ResourceStorage], want.Spec.Resources.Requests[corev1.ResourceStorage]
	if size.Cmp(need) >= 0 {
		return true, nil
	}
	if have.Spec.VolumeName == "" {
		// Never bound, so nothing is on it: made again at the new size.
		log.Info("replacing the unbound scratch volume with one of the new scratchSize", "claim", have.Name, "size", size.String(), "scratchSize", need.String())
		s.pruneLater(have)
		s.progress(rdfv1.PhasePending, status.ReasonBuilding, "the unbound scratch volume %s (%s) is replaced by one of scratchSize %s", have.Name, size.String(), need.String())
		s.requeue(restoredClaimRecheck)
		s.stop = true
		return false, nil
	}
	class := ptr.Deref(have.Spec.StorageClassName, "")
	sc := &storagev1.StorageClass{}
	expandable := false
	if class != "" {
		if err := r.APIReader.Get(ctx, client.ObjectKey{Name: class}, sc); err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("cannot read StorageClass %s of volume %s: %w", class, have.Name, err)
		} else if err == nil {
			expandable = ptr.Deref(sc.AllowVolumeExpansion, false)
		}
	}
	if !expandable {
		f := &rdfv1.BuildFailure{Step: "workflow", Reason: status.ReasonScratchNotExpandable, Message: truncate(fmt.Sprintf(
			"database.scratchSize asks for %s, but the kept scratch volume %s has %s and its StorageClass %q does not allow volume expansion "+
				"(allowVolumeExpansion); it holds the loader's checkpoint, so the operator does not replace it: set scratchSize back to %s to resume on it, "+
				"or change trigger.rebuild to build from the start on new volumes of the new size",
			need.String(), have.Name, size.String(), class, size.String()))}
		log.Info("the scratch volume cannot grow", "claim", have.Name, "storageClass", class, "size", size.String(), "scratchSize", need.String())
		return false, r.buildFailed(ctx, s, &workflowObservation{Done: true, Failure: f, FinishedAt: s.now})
	}
	base := have.DeepCopy()
	have.Spec.Resources.Requests[corev1.ResourceStorage] = need
	if err := r.Patch(ctx, have, client.MergeFrom(base)); err != nil {
		return false, fmt.Errorf("cannot expand the scratch volume %s to %s: %w", have.Name, need.String(), err)
	}
	log.Info("expanding the scratch volume in place", "claim", have.Name, "from", size.String(), "to", need.String(), "storageClass", class, "attempt", st.Attempt)
	r.eventNow(s, corev1.EventTypeNormal, "ScratchExpanded", "scratch volume %s grows from %s to %s (StorageClass %s allows expansion); attempt %d of revision %s resumes on it",
		have.Name, size.String(), need.String(), class, st.Attempt, st.SourceRevision)
	return true, nil
}
