package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

// restoredClaimRecheck is how soon to look again at a restored volume of the same
// name that is still being deleted (no watch reports its disappearance: deleted
// serving volumes are not owned).
const restoredClaimRecheck = 5 * time.Second

// servingIndex indexes BulkLoads by the workload they serve ("Kind/name"), so that an
// event of a Deployment or StatefulSet finds the BulkLoads to reconcile.
const servingIndex = "spec.serving.workload"

func servingIndexValue(kind rdfv1.WorkloadKind, name string) string {
	if kind == "" {
		kind = rdfv1.WorkloadDeployment
	}
	return string(kind) + "/" + name
}

func indexServing(o client.Object) []string {
	bl, ok := o.(*rdfv1.BulkLoad)
	if !ok || bl.Spec.Serving == nil {
		return nil
	}
	return []string{servingIndexValue(bl.Spec.Serving.Kind, bl.Spec.Serving.Name)}
}

// serve hands the snapshot the spec asks for (the newest, or spec.serving.snapshotName)
// to the serving workload and keeps it there. It runs on every reconcile, and the
// workload is watched, so a revert of the workload's volume (a helm upgrade's
// three-way merge restoring the chart's emptyDir, a GitOps self-heal) is undone within
// one reconcile. The BulkLoad is Ready only once the workload has rolled out onto the
// database; until then, and while it serves something else, it says why.
func (r *BulkLoadReconciler) serve(ctx context.Context, s *scope) error {
	err := r.handOff(ctx, s)
	if err != nil && !status.IsTrue(&s.before, rdfv1.ConditionReady) {
		// What the workload serves now is unknown (retried at once): a database served
		// before is taken to be served still; one not served yet is not Ready.
		s.servingProblem(outcomeProgressing, status.ReasonServingPending, "%v", err)
	}
	return err
}

// handOff is serve's work; an error leaves what is served unknown.
func (r *BulkLoadReconciler) handOff(ctx context.Context, s *scope) error {
	bl, st := s.bl, &s.bl.Status
	sv := bl.Spec.Serving
	want := st.CurrentSnapshot
	if sv != nil && sv.SnapshotName != "" {
		want = sv.SnapshotName
	}
	if sv == nil || want == "" {
		s.servingSettled = true
		return nil
	}
	log := ctrl.LoggerFrom(ctx)
	kind := string(sv.Kind)
	if kind == "" {
		kind = string(rdfv1.WorkloadDeployment)
	}

	vs := &snapv1.VolumeSnapshot{}
	err := r.Get(ctx, client.ObjectKey{Namespace: bl.Namespace, Name: want}, vs)
	switch {
	case apierrors.IsNotFound(err) || (err == nil && (vs.Labels[specs.LabelBulkLoad] != bl.Name || vs.Labels[specs.LabelRole] != specs.RoleSnapshot)):
		s.servingProblem(outcomeStalled, status.ReasonServingSnapshotNotFound, "snapshot %s does not exist or is not one of this BulkLoad's (retained: %s)", want, snapshotNames(st.Snapshots))
		return nil
	case err != nil:
		return fmt.Errorf("cannot read snapshot %s: %w", want, err)
	case vs.Status == nil || vs.Status.ReadyToUse == nil || !*vs.Status.ReadyToUse:
		s.servingProblem(outcomeProgressing, status.ReasonServingPending, "waiting for snapshot %s to be ready to use", want)
		return nil
	}
	rev := vs.Annotations[specs.AnnotationRevision]
	claim := specs.ServingClaim(bl, rev, vs.Status.RestoreSize, vs.Annotations[specs.AnnotationSourceNode])

	obj, tmpl, err := r.servingWorkload(ctx, bl)
	if err != nil {
		return err
	}
	if obj == nil {
		// The workload is watched: its creation brings the BulkLoad back.
		log.V(1).Info("waiting for the serving workload to exist", "kind", kind, "workload", sv.Name, "snapshot", want)
		s.servingProblem(outcomeProgressing, status.ReasonServingPending, "snapshot %s is ready; waiting for %s %s to hand it to", want, kind, sv.Name)
		return nil
	}
	if n := specs.WorkloadReplicas(obj); n > 1 {
		s.servingProblem(outcomeStalled, status.ReasonServingReplicasUnsupported, "%s %s has %d replicas, but the restored volume holds one TDB2 database, which only one process may open "+
			"(TDB2 locks it; a ReadWriteOnce volume also attaches to one node only): scale it to 1", kind, sv.Name, n)
		return nil
	}
	handoff := specs.Handoff{Volume: sv.VolumeName, Claim: claim.Name, Revision: rev}
	next, err := handoff.PodTemplate(tmpl)
	if err != nil {
		s.servingProblem(outcomeStalled, status.ReasonServingVolumeNotFound, "%s %s: %v", kind, sv.Name, err)
		return nil
	}

	// The restored volume. One of the same name still being deleted (a rollback to a
	// snapshot whose old restore is pruned but not yet released) is waited for: a pod
	// cannot start on a terminating claim.
	existing := &corev1.PersistentVolumeClaim{}
	if err := r.Get(ctx, client.ObjectKeyFromObject(claim), existing); err == nil && !existing.DeletionTimestamp.IsZero() {
		s.servingProblem(outcomeProgressing, status.ReasonServingPending, "waiting for the old restored volume %s to be deleted before restoring snapshot %s again", claim.Name, want)
		s.requeue(restoredClaimRecheck)
		return nil
	} else if apierrors.IsNotFound(err) {
		if _, err := r.createIfMissing(ctx, claim); err != nil {
			return fmt.Errorf("cannot create the serving volume %s: %w", claim.Name, err)
		}
	} else if err != nil {
		return fmt.Errorf("cannot read the serving volume %s: %w", claim.Name, err)
	}

	handedOff := handoff.Holds(tmpl)
	drifted := !handedOff && st.ServingClaim == claim.Name && st.ServedSnapshot == want
	if !handedOff {
		waiting, err := r.restoredClaimUnbound(ctx, claim, vs.Annotations[specs.AnnotationSourceNode])
		if err != nil {
			return err
		}
		if waiting != "" {
			msg := fmt.Sprintf("waiting for the volume %s restored from snapshot %s to be bound before %s %s mounts it: %s", claim.Name, want, kind, sv.Name, waiting)
			if !s.saidMessage(msg) {
				log.Info("waiting for the restored volume to be bound before handing it off", "claim", claim.Name, "snapshot", want, "state", waiting)
			}
			s.servingProblem(outcomeProgressing, status.ReasonServingPending, "%s", msg)
			s.requeue(restoredClaimRecheck)
			return nil
		}
	}
	if !handedOff {
		// Replace the volume's source as a whole (the server-side apply below cannot
		// remove a source another manager owns); the optimistic lock keeps a
		// concurrent edit of the workload from being overwritten.
		base := obj.DeepCopyObject().(client.Object)
		was := specs.DescribeVolume(tmpl, sv.VolumeName)
		managers := specs.VolumeManagers(obj.GetManagedFields(), sv.VolumeName)
		*tmpl = *next
		if err := r.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}), client.FieldOwner(specs.FieldManager)); err != nil {
			return fmt.Errorf("cannot hand snapshot %s to %s %s: %w", want, kind, sv.Name, err)
		}
		if drifted {
			log.Info("the serving workload no longer mounted the handed-off database: put it back", "kind", kind, "workload", sv.Name, "found", was, "managers", managers, "claim", claim.Name)
			r.eventNow(s, corev1.EventTypeWarning, "HandoffDriftCorrected", "%s %s mounted %s instead of %s (fields of volume %s held by %s); put %s back",
				kind, sv.Name, was, claim.Name, sv.VolumeName, orDefault(strings.Join(managers, ", "), "no other manager"), claim.Name)
			handoffDriftCorrectionsTotal.WithLabelValues(bl.Namespace, bl.Name).Inc()
		} else {
			log.Info("handed the database to the serving workload", "kind", kind, "workload", sv.Name, "claim", claim.Name, "revision", rev, "snapshot", want)
			r.eventNow(s, corev1.EventTypeNormal, "HandedOff", "%s %s now mounts %s (snapshot %s, revision %s)", kind, sv.Name, claim.Name, want, rev)
		}
	}
	if !handedOff || !specs.OwnsHandoff(obj.GetManagedFields(), sv.VolumeName) {
		apply, err := handoff.Apply(obj)
		if err != nil {
			return err
		}
		if err := r.Apply(ctx, apply, client.FieldOwner(specs.FieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("cannot apply the handoff of snapshot %s to %s %s: %w", want, kind, sv.Name, err)
		}
	}
	st.ServingClaim = claim.Name
	st.ServedSnapshot = want

	pending := "the template was just changed"
	if handedOff {
		pending = specs.Rollout(obj)
	}
	if pending == "" {
		s.servingSettled = true
		if s.saidReason(status.ReasonRollingOut, status.ReasonHandoffDrifted) {
			log.Info("serving workload rolled out onto the database", "kind", kind, "workload", sv.Name, "claim", claim.Name, "snapshot", want)
		}
		return nil
	}
	if handedOff {
		// The workload's status only counts pods; a new pod the scheduler cannot place (a
		// nodeSelector against a node-local restore, no room on the snapshot's node) would
		// otherwise show as "old pods are still running" until the progress deadline.
		stuck, err := r.unschedulableServingPod(ctx, obj, sv.VolumeName, claim.Name)
		if err != nil {
			return err
		}
		if stuck != "" {
			pending += "; " + stuck
			if !s.said(func(c metav1.Condition) bool { return strings.Contains(c.Message, stuck) }) {
				log.Info("a serving pod cannot be scheduled onto the handed-off database", "kind", kind, "workload", sv.Name, "claim", claim.Name, "scheduler", stuck)
			}
		}
		// pods are not watched: look again while the rollout lasts
		s.requeue(restoredClaimRecheck)
	}
	log.V(1).Info("waiting for the serving workload's rollout", "kind", kind, "workload", sv.Name, "claim", claim.Name, "pending", pending)
	reason, msg := status.ReasonRollingOut, fmt.Sprintf("%s %s rolls out onto %s (snapshot %s): %s", kind, sv.Name, claim.Name, want, pending)
	if drifted {
		reason = status.ReasonHandoffDrifted
		msg = fmt.Sprintf("%s %s no longer mounted %s; the operator put it back and the workload rolls out onto it again", kind, sv.Name, claim.Name)
	}
	s.servingProblem(outcomeProgressing, reason, "%s", msg)
	return nil
}

// servingProblem records why the serving workload does not serve the database it
// should (the Ready condition says it) and makes it the outcome, unless the build phases
// have already said something (a build under way, a failure): those are more urgent.
func (s *scope) servingProblem(kind outcomeKind, reason, format string, args ...any) {
	o := &outcome{kind: kind, phase: rdfv1.PhaseHandingOff, reason: reason, message: fmt.Sprintf(format, args...)}
	if kind == outcomeStalled {
		o.phase = rdfv1.PhaseFailed
	}
	s.servingIssue = o
	if s.outcome != nil {
		return
	}
	st := &s.bl.Status
	if st.SourceRevision != "" || (st.LastFailedRevision != "" && st.LastFailedRevision == s.wanted.ID) {
		return
	}
	s.outcome = o
}

func snapshotNames(recs []rdfv1.SnapshotRecord) string {
	if len(recs) == 0 {
		return "none"
	}
	names := make([]string, len(recs))
	for i, rec := range recs {
		names[i] = rec.Name
	}
	return strings.Join(names, ", ")
}

// restoredClaimUnbound says why the restored volume is not ready to be handed off
// ("" when it is). A volume that must land on one node (node) or whose class binds at
// once (Immediate) is handed off only once Bound: a pod pointed at a claim still being
// provisioned may be placed by the scheduler elsewhere than the node-local provisioner
// then puts the volume, and stay Pending. The external-provisioner provisions a
// WaitForFirstConsumer claim as soon as it carries the selected-node annotation,
// without a consumer (specs.ServingClaim sets it from node), so the wait ends. A
// WaitForFirstConsumer claim without a node (a network volume, restorable anywhere)
// binds only for its first consumer: it is handed off unbound and binds where the
// scheduler puts the serving pod.
func (r *BulkLoadReconciler) restoredClaimUnbound(ctx context.Context, want *corev1.PersistentVolumeClaim, node string) (string, error) {
	pvc := &corev1.PersistentVolumeClaim{}
	if err := r.Get(ctx, client.ObjectKeyFromObject(want), pvc); apierrors.IsNotFound(err) {
		return "it was just created", nil
	} else if err != nil {
		return "", fmt.Errorf("cannot read the serving volume %s: %w", want.Name, err)
	}
	if pvc.Status.Phase == corev1.ClaimBound {
		return "", nil
	}
	phase := string(pvc.Status.Phase)
	if phase == "" {
		phase = string(corev1.ClaimPending)
	}
	if node != "" {
		return fmt.Sprintf("it is %s; the snapshot's volume was on node %s, where the driver restores it (annotation %s)", phase, node, specs.AnnotationSelectedNode), nil
	}
	className := ptr.Deref(pvc.Spec.StorageClassName, "")
	sc := &storagev1.StorageClass{}
	if className == "" {
		def, err := r.defaultStorageClass(ctx)
		if err != nil {
			return "", err
		}
		if def == nil {
			return fmt.Sprintf("it is %s, without a StorageClass (the cluster has no default one)", phase), nil
		}
		sc = def
	} else if err := r.APIReader.Get(ctx, client.ObjectKey{Name: className}, sc); apierrors.IsNotFound(err) {
		return fmt.Sprintf("it is %s, and its StorageClass %s does not exist", phase, className), nil
	} else if err != nil {
		return "", fmt.Errorf("cannot read StorageClass %s: %w", className, err)
	}
	if sc.VolumeBindingMode != nil && *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
		ctrl.LoggerFrom(ctx).V(1).Info("handing off a restored volume that binds for its first consumer", "claim", pvc.Name, "storageClass", sc.Name)
		return "", nil
	}
	return fmt.Sprintf("it is %s (StorageClass %s has volumeBindingMode Immediate)", phase, sc.Name), nil
}

// unschedulableServingPod names a pod of the serving workload that mounts claim and
// that the scheduler cannot place, with the scheduler's reason ("" when there is none).
// The pods are read uncached and only while a rollout waits.
func (r *BulkLoadReconciler) unschedulableServingPod(ctx context.Context, obj client.Object, volumeName, claim string) (string, error) {
	sel, err := metav1.LabelSelectorAsSelector(specs.WorkloadSelector(obj))
	if err != nil || sel.Empty() {
		return "", nil // the workload controller refuses such a selector itself
	}
	pods := &corev1.PodList{}
	if err := r.APIReader.List(ctx, pods, client.InNamespace(obj.GetNamespace()), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return "", fmt.Errorf("cannot list the pods of %s: %w", obj.GetName(), err)
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if specs.ServedClaim(&corev1.PodTemplateSpec{Spec: pod.Spec}, volumeName) != claim {
			continue
		}
		if why := specs.UnschedulableReason(pod); why != "" {
			return fmt.Sprintf("pod %s cannot be scheduled: %s", pod.Name, why), nil
		}
	}
	return "", nil
}

// servingWorkload reads spec.serving's workload, uncached (the cache holds only the
// names of Deployments and StatefulSets), with its pod template; nil when it does not exist.
func (r *BulkLoadReconciler) servingWorkload(ctx context.Context, bl *rdfv1.BulkLoad) (client.Object, *corev1.PodTemplateSpec, error) {
	sv := bl.Spec.Serving
	obj, tmpl := emptyWorkload(sv)
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: bl.Namespace, Name: sv.Name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("cannot read the serving %s %s: %w", orDefault(string(sv.Kind), string(rdfv1.WorkloadDeployment)), sv.Name, err)
	}
	return obj, tmpl, nil
}

// emptyWorkload is an empty object of the serving workload's kind to read it into, and its pod
// template.
func emptyWorkload(sv *rdfv1.ServingSpec) (client.Object, *corev1.PodTemplateSpec) {
	if sv.Kind == rdfv1.WorkloadStatefulSet {
		sts := &appsv1.StatefulSet{}
		return sts, &sts.Spec.Template
	}
	d := &appsv1.Deployment{}
	return d, &d.Spec.Template
}
