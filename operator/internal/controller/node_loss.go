package controller

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

// nodeLoss is a node given up: gone, or not Ready for longer than the grace period.
type nodeLoss struct {
	node string
	why  string
}

// lostNode says whether the node is lost (past grace); otherwise, how long until it
// would be if it stays as it is (0 while it is Ready).
func (r *BulkLoadReconciler) lostNode(ctx context.Context, name string, now time.Time, grace time.Duration) (*nodeLoss, time.Duration, error) {
	node := &corev1.Node{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, node); apierrors.IsNotFound(err) {
		return &nodeLoss{node: name, why: fmt.Sprintf("node %s no longer exists", name)}, 0, nil
	} else if err != nil {
		return nil, 0, fmt.Errorf("cannot read node %s: %w", name, err)
	}
	var ready *corev1.NodeCondition
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			ready = &node.Status.Conditions[i]
		}
	}
	if ready != nil && ready.Status == corev1.ConditionTrue {
		return nil, 0, nil
	}
	since, state := node.CreationTimestamp.Time, "has no Ready condition"
	if ready != nil {
		since, state = ready.LastTransitionTime.Time, fmt.Sprintf("has been Ready=%s (%s)", ready.Status, orDefault(ready.Reason, "no reason"))
	}
	if left := since.Add(grace).Sub(now); left > 0 {
		return nil, left, nil
	}
	return &nodeLoss{node: name, why: fmt.Sprintf("node %s %s since %s, longer than spec.build.nodeLossGracePeriod (%s)",
		name, state, since.UTC().Format(time.RFC3339), grace)}, 0, nil
}

// claimNode is the node a claim's volume is bound to when that volume is node-local
// ("" otherwise, or while unbound).
func (r *BulkLoadReconciler) claimNode(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (string, error) {
	node := pvc.Annotations[specs.AnnotationSelectedNode]
	if node == "" || pvc.Spec.VolumeName == "" {
		return "", nil
	}
	pv := &corev1.PersistentVolume{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv); apierrors.IsNotFound(err) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("cannot read the persistent volume %s of %s: %w", pvc.Spec.VolumeName, pvc.Name, err)
	}
	return specs.NodeBound(pv, node), nil
}

// nodeCheckInterval is how often a running build, or a node-local served volume, has
// its nodes looked at: nothing else wakes the operator when a node dies quietly.
func nodeCheckInterval(grace time.Duration) time.Duration { return grace / 2 }

// checkBuildNodes ends the running attempt when a node it depends on is lost: the node
// of one of its step pods, or the node its build volumes are bound to. The next attempt
// (after the backoff, within retry.buildAttempts) runs on another node; node-local
// volumes bound to the lost node cannot be resumed from and are replaced.
func (r *BulkLoadReconciler) checkBuildNodes(ctx context.Context, s *scope) (bool, error) {
	bl := s.bl
	grace := bl.Spec.Build.EffectiveNodeLossGracePeriod()
	podsOn := map[string][]placedPod{}
	var nodes []string
	for _, p := range s.obs.Placed {
		if _, ok := podsOn[p.Node]; !ok {
			nodes = append(nodes, p.Node)
		}
		podsOn[p.Node] = append(podsOn[p.Node], p)
	}
	claimsOn := map[string][]*corev1.PersistentVolumeClaim{}
	for _, name := range []string{specs.DataClaimName(bl, bl.Status.SourceRevision), specs.ScratchClaimName(bl, bl.Status.SourceRevision)} {
		pvc := &corev1.PersistentVolumeClaim{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: bl.Namespace, Name: name}, pvc); apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			return false, fmt.Errorf("cannot read volume %s: %w", name, err)
		}
		node, err := r.claimNode(ctx, pvc)
		if err != nil {
			return false, err
		}
		if node == "" {
			continue
		}
		if _, ok := podsOn[node]; !ok && !slices.Contains(nodes, node) {
			nodes = append(nodes, node)
		}
		claimsOn[node] = append(claimsOn[node], pvc)
	}
	for _, node := range nodes {
		lost, left, err := r.lostNode(ctx, node, s.now, grace)
		if err != nil {
			return false, err
		}
		if lost == nil {
			if left > 0 {
				s.requeue(left)
			}
			continue
		}
		return true, r.buildNodeLost(ctx, s, lost, podsOn[node], claimsOn[node])
	}
	if len(nodes) > 0 {
		s.requeue(nodeCheckInterval(grace))
	}
	return false, nil
}

// buildNodeLost ends the attempt: its workflow is deleted, its pods on the lost node
// are removed at once (their kubelet cannot confirm it, and until they are gone the
// volumes they mount are not released), node-local volumes bound to the node are
// deleted, and the failure (NodeLost, retryable) takes the usual retry path.
func (r *BulkLoadReconciler) buildNodeLost(ctx context.Context, s *scope, lost *nodeLoss, pods []placedPod, claims []*corev1.PersistentVolumeClaim) error {
	st := &s.bl.Status
	step := s.obs.Step
	pods, err := r.podsOnLostNode(ctx, s, lost.node, pods)
	if err != nil {
		return err
	}
	var podNames, claimNames []string
	for _, p := range pods {
		step = cmp.Or(p.Step, step)
		podNames = append(podNames, p.Pod)
		s.forceDelete = append(s.forceDelete, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: s.bl.Namespace, Name: p.Pod}})
	}
	for _, pvc := range claims {
		claimNames = append(claimNames, pvc.Name)
		s.pruneLater(pvc)
	}
	msg := lost.why
	if len(podNames) > 0 {
		msg += "; its pod " + strings.Join(podNames, ", ") + " is removed"
	}
	if len(claimNames) > 0 {
		msg += "; the node-local volumes " + strings.Join(claimNames, ", ") + " bound to it are replaced: the next attempt starts over on another node"
	} else {
		msg += "; the next attempt runs on another node"
	}
	f := &rdfv1.BuildFailure{Step: orDefault(step, "workflow"), Reason: status.ReasonNodeLost, Retryable: true, Node: lost.node, Message: truncate(msg)}
	if s.workflow != nil {
		f.SpecDigest = s.workflow.Annotations[AnnotationSpecDigest]
		s.pruneLater(s.workflow)
	}
	// The operator's verdict: the attempt is over, whatever its workflow says while it goes.
	if st.Workflow != nil {
		st.Workflow.Phase = string(wfv1.WorkflowFailed)
		st.Workflow.FinishedAt = &metav1.Time{Time: s.now}
	}
	ctrl.LoggerFrom(ctx).Info("node lost: the build attempt ends", "node", lost.node, "why", lost.why, "attempt", st.Attempt,
		"revision", st.SourceRevision, "pods", podNames, "replacedVolumes", claimNames)
	r.event(s, corev1.EventTypeWarning, status.ReasonNodeLost, "attempt %d of revision %s: %s", st.Attempt, st.SourceRevision, msg)
	return r.buildFailed(ctx, s, &workflowObservation{Done: true, Failure: f, FinishedAt: s.now, Step: f.Step})
}

// podsOnLostNode adds to the step pods Argo's status places on the lost node those it does
// not name yet: its status lags the pods (a node lost right after a step's pod started), and
// a pod left on the node keeps the volumes it mounts from being released. The workflow's pods
// are read uncached; finished ones hold nothing.
func (r *BulkLoadReconciler) podsOnLostNode(ctx context.Context, s *scope, node string, placed []placedPod) ([]placedPod, error) {
	if s.workflow == nil {
		return placed, nil
	}
	pods := &corev1.PodList{}
	if err := r.APIReader.List(ctx, pods, client.InNamespace(s.bl.Namespace), client.MatchingLabels{argoWorkflowLabel: s.workflow.Name}); err != nil {
		return nil, fmt.Errorf("cannot list the pods of workflow %s: %w", s.workflow.Name, err)
	}
	for _, pod := range pods.Items {
		if pod.Spec.NodeName != node || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed ||
			slices.ContainsFunc(placed, func(p placedPod) bool { return p.Pod == pod.Name }) {
			continue
		}
		placed = append(placed, placedPod{Pod: pod.Name, Node: node})
	}
	return placed, nil
}

// checkServedNode follows spec.serving.onNodeLoss when the served volume is node-local
// and its node is lost: Wait reports it and waits for the node; Rebuild drops the
// snapshots lost with the node and builds the served revision again from the source.
// Not while a build runs (its handoff replaces the volume anyway).
func (r *BulkLoadReconciler) checkServedNode(ctx context.Context, s *scope) error {
	bl, st := s.bl, &s.bl.Status
	sv := bl.Spec.Serving
	if sv == nil || st.ServingClaim == "" || st.SourceRevision != "" {
		return nil
	}
	pvc := &corev1.PersistentVolumeClaim{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: bl.Namespace, Name: st.ServingClaim}, pvc); apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("cannot read the serving volume %s: %w", st.ServingClaim, err)
	}
	if !pvc.DeletionTimestamp.IsZero() {
		return nil // already given up; its replacement is under way
	}
	node, err := r.claimNode(ctx, pvc)
	if err != nil || node == "" {
		return err
	}
	grace := bl.Spec.Build.EffectiveNodeLossGracePeriod()
	lost, left, err := r.lostNode(ctx, node, s.now, grace)
	switch {
	case err != nil:
		return err
	case lost == nil && left > 0:
		s.requeue(left)
		return nil
	case lost == nil:
		s.requeue(nodeCheckInterval(grace))
		return nil
	}
	log := ctrl.LoggerFrom(ctx)
	if sv.EffectiveOnNodeLoss() == rdfv1.NodeLossWait {
		msg := fmt.Sprintf("the served volume %s is on a lost node: %s; spec.serving.onNodeLoss is Wait, so the operator waits for the node to return. "+
			"Node-local snapshots are lost with their node: to build the database again elsewhere, set spec.serving.onNodeLoss to Rebuild or change trigger.rebuild",
			pvc.Name, lost.why)
		if !s.saidReason(status.ReasonServingNodeLost) {
			log.Info("served volume on a lost node: waiting for it (serving.onNodeLoss Wait)", "claim", pvc.Name, "node", node, "why", lost.why)
			r.event(s, corev1.EventTypeWarning, status.ReasonServingNodeLost, "%s", msg)
		}
		s.servingProblem(outcomeProgressing, status.ReasonServingNodeLost, "%s", msg)
		s.requeue(nodeCheckInterval(grace))
		return nil
	}
	return r.rebuildLostServing(ctx, s, pvc, lost)
}

// rebuildLostServing drops what was lost with the node (its snapshots, the served
// volume) so that resolveRevision builds the served revision again. A snapshot on
// another node that survives becomes current meanwhile, and is served.
func (r *BulkLoadReconciler) rebuildLostServing(ctx context.Context, s *scope, served *corev1.PersistentVolumeClaim, lost *nodeLoss) error {
	bl, st := s.bl, &s.bl.Status
	vss := &snapv1.VolumeSnapshotList{}
	if err := r.listOwned(ctx, bl, vss, "snapshots"); err != nil {
		return err
	}
	gone := map[string]bool{}
	for i := range vss.Items {
		vs := &vss.Items[i]
		if vs.Annotations[specs.AnnotationSourceNode] == lost.node {
			gone[vs.Name] = true
			s.pruneLater(vs)
		}
	}
	var kept []rdfv1.SnapshotRecord
	var goneNames []string
	for _, rec := range st.Snapshots {
		if gone[rec.Name] {
			goneNames = append(goneNames, rec.Name)
			continue
		}
		kept = append(kept, rec)
	}
	st.Snapshots = kept
	what := fmt.Sprintf("snapshot %s, on another node, is restored again", st.CurrentSnapshot)
	if gone[st.CurrentSnapshot] || st.CurrentSnapshot == "" {
		what = fmt.Sprintf("revision %s is built again from the source", st.LastBuiltRevision)
		st.CurrentSnapshot, st.LastBuiltRevision = "", ""
		if len(kept) > 0 {
			st.CurrentSnapshot, st.LastBuiltRevision = kept[0].Name, kept[0].Revision
		}
	}
	s.pruneLater(served)
	msg := fmt.Sprintf("the served volume %s is on a lost node: %s; spec.serving.onNodeLoss is Rebuild: %s (snapshots lost with the node: %s)",
		served.Name, lost.why, what, orDefault(strings.Join(goneNames, ", "), "none"))
	ctrl.LoggerFrom(ctx).Info("served volume on a lost node: building again (serving.onNodeLoss Rebuild)", "claim", served.Name, "node", lost.node,
		"why", lost.why, "lostSnapshots", goneNames, "current", st.CurrentSnapshot)
	r.event(s, corev1.EventTypeWarning, status.ReasonServingNodeLost, "%s", msg)
	return nil
}
