package controller

import (
	"context"
	"fmt"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

// snapshot is the phase after a succeeded build workflow: it takes the VolumeSnapshot
// of the database volume and waits for it to be readyToUse (s.snapshot then), for
// recordBuild to record.
func (r *BulkLoadReconciler) snapshot(ctx context.Context, s *scope) error {
	if !s.obs.Done || !s.obs.Succeeded || s.bl.Status.SourceRevision == "" {
		return nil
	}
	return r.ensureSnapshot(ctx, s)
}

// ensureSnapshot snapshots the database volume of a succeeded workflow and waits
// for the CSI driver to mark the snapshot readyToUse.
func (r *BulkLoadReconciler) ensureSnapshot(ctx context.Context, s *scope) error {
	bl, st := s.bl, &s.bl.Status
	want := specs.DatabaseSnapshot(bl, st.SourceRevision)
	vs := &snapv1.VolumeSnapshot{}
	err := r.Get(ctx, client.ObjectKeyFromObject(want), vs)
	switch {
	case apierrors.IsNotFound(err):
		node, err := r.buildNode(ctx, bl, st.SourceRevision)
		if err != nil {
			return err
		}
		if node != "" {
			want.Annotations[specs.AnnotationSourceNode] = node
		}
		want.Annotations[AnnotationSpecDigest] = specDigest(bl, scopeSnapshot)
		if err := r.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("cannot create snapshot %s: %w", want.Name, err)
		} else if err == nil {
			ctrl.LoggerFrom(ctx).Info("snapshot taken of the database volume", "snapshot", want.Name,
				"volume", *want.Spec.Source.PersistentVolumeClaimName, "revision", st.SourceRevision, "sourceNode", node)
			r.eventNow(s, corev1.EventTypeNormal, "SnapshotCreated", "snapshot %s of volume %s", want.Name, *want.Spec.Source.PersistentVolumeClaimName)
		}
		vs = want
	case err != nil:
		return fmt.Errorf("cannot read snapshot %s: %w", want.Name, err)
	case !vs.DeletionTimestamp.IsZero():
		// A failed (or lost) snapshot of this revision, pruned: it is taken again once gone.
		s.progress(rdfv1.PhaseSnapshotting, status.ReasonBuilding, "waiting for the old snapshot %s to be deleted before it is taken again", vs.Name)
		s.requeue(restoredClaimRecheck)
		return nil
	}
	if vs.Status == nil || vs.Status.ReadyToUse == nil || !*vs.Status.ReadyToUse {
		return r.waitForSnapshot(ctx, s, vs)
	}
	s.snapshot = vs
	return nil
}

// waitForSnapshot waits for a snapshot that is not readyToUse yet. An error on it is
// shown but not final: the snapshot controller retries and clears it (a busy driver,
// a quota, a lost connection). Final is only snapshot.readyTimeout passing, counted
// from the snapshot's creation (stored, so an operator restart does not reset it).
func (r *BulkLoadReconciler) waitForSnapshot(ctx context.Context, s *scope, vs *snapv1.VolumeSnapshot) error {
	timeout := s.bl.Spec.Snapshot.EffectiveReadyTimeout()
	since := vs.CreationTimestamp.Time
	if since.IsZero() {
		since = s.now
	}
	deadline := since.Add(timeout)
	lastError := ""
	if vs.Status != nil && vs.Status.Error != nil && vs.Status.Error.Message != nil {
		lastError = truncate(*vs.Status.Error.Message)
	}
	if !s.now.Before(deadline) {
		msg := fmt.Sprintf("snapshot %s is not ready to use %s after it was created (snapshot.readyTimeout)", vs.Name, timeout)
		if lastError != "" {
			msg += "; the snapshot controller's last error: " + lastError
		}
		f := &rdfv1.BuildFailure{Step: specs.StepSnapshot, Reason: status.ReasonSnapshotTimeout, Message: truncate(msg), SpecDigest: vs.Annotations[AnnotationSpecDigest]}
		return r.buildFailed(ctx, s, &workflowObservation{Done: true, Failure: f, FinishedAt: s.now})
	}
	msg := fmt.Sprintf("waiting for snapshot %s to be ready to use (until %s)", vs.Name, deadline.UTC().Format(time.RFC3339))
	if lastError != "" {
		msg += "; the snapshot controller reports an error and retries: " + lastError
		if !s.saidMessage(msg) {
			ctrl.LoggerFrom(ctx).Info("snapshot error, retried by the snapshot controller", "snapshot", vs.Name, "error", lastError, "deadline", deadline)
			r.event(s, corev1.EventTypeWarning, "SnapshotError", "snapshot %s: %s (retried until %s)", vs.Name, lastError, deadline.UTC().Format(time.RFC3339))
		}
	}
	ctrl.LoggerFrom(ctx).V(1).Info("waiting for the snapshot to be ready to use", "snapshot", vs.Name, "deadline", deadline)
	s.progress(rdfv1.PhaseSnapshotting, status.ReasonBuilding, "%s", msg)
	s.requeue(deadline.Sub(s.now))
	return nil
}

// buildNode is the node a build's database volume is bound to, "" unless the volume
// is node-local: the snapshot then carries it, so that the volume restored from it
// is created there (see specs.ServingClaim).
func (r *BulkLoadReconciler) buildNode(ctx context.Context, bl *rdfv1.BulkLoad, revision string) (string, error) {
	pvc := &corev1.PersistentVolumeClaim{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: bl.Namespace, Name: specs.DataClaimName(bl, revision)}, pvc); apierrors.IsNotFound(err) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("cannot read the database volume %s: %w", specs.DataClaimName(bl, revision), err)
	}
	node := pvc.Annotations[specs.AnnotationSelectedNode]
	if node == "" || pvc.Spec.VolumeName == "" {
		return "", nil
	}
	pv := &corev1.PersistentVolume{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv); err != nil {
		return "", fmt.Errorf("cannot read the persistent volume %s of %s: %w", pvc.Spec.VolumeName, pvc.Name, err)
	}
	return specs.NodeBound(pv, node), nil
}
