// Package controller reconciles BulkLoads: it resolves the source revision to build,
// runs one Argo Workflow per build attempt, snapshots the database, hands the
// snapshot to the serving workload and prunes what retention no longer needs.
package controller

import (
	"context"
	"fmt"
	"slices"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/source"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/dumpset"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

// Finalizer lets the controller remove a BulkLoad's children (and, by policy, its
// snapshots) before the BulkLoad goes.
const Finalizer = "rdf.bulkload.io/cleanup"

// ControllerName names the controller in logs, metrics and events.
const ControllerName = "bulkload"

// conflictRequeue is how soon a reconcile that lost an optimistic-lock race retries.
const conflictRequeue = 100 * time.Millisecond

// BulkLoadReconciler reconciles BulkLoad objects.
type BulkLoadReconciler struct {
	client.Client
	// APIReader reads objects the controller must not cache cluster-wide: Secrets,
	// ConfigMaps and the serving workloads.
	APIReader client.Reader
	Recorder  recorder.EventRecorder
	// Resolver resolves source revisions for trigger.mode=watch; nil disables watch mode.
	Resolver dumpset.Resolver
	// SourceListTimeout bounds one listing of a watched source; zero means
	// DefaultSourceListTimeout.
	SourceListTimeout time.Duration
	// DefaultFetchImage and DefaultLoaderImage are used when the spec names none.
	DefaultFetchImage  string
	DefaultLoaderImage string
	// DefaultImagePullPolicy of the build steps' images, unless spec.loader.imagePullPolicy
	// says; empty leaves it to Kubernetes.
	DefaultImagePullPolicy corev1.PullPolicy
	// StepMetricsLinger: how long the fetch step keeps serving its metrics after it ends.
	StepMetricsLinger time.Duration
	// Clock is the wall clock unless a test sets one.
	Clock clock.PassiveClock
	// WorkflowStartTimeout is how long a build Workflow may go without a status from an
	// Argo workflow-controller before the BulkLoad reports it not started; zero means
	// DefaultWorkflowStartTimeout.
	WorkflowStartTimeout time.Duration
	// ArgoInstanceID is the instanceID of the workflow-controller that runs the build
	// Workflows, which carry it in Argo's controller-instanceid label; empty: none.
	ArgoInstanceID string
	// ArgoArtifactRepository, when set, is the artifact repository of the build Workflows
	// (specs.BuildParams.ArtifactRepository); nil: the controller's default.
	ArgoArtifactRepository *wfv1.ArtifactRepositoryRef
	// DependencyRecheck is how often a BulkLoad waiting for a missing API (Argo
	// Workflows, VolumeSnapshots) checks again; zero means DefaultDependencyRecheck.
	DependencyRecheck time.Duration

	// polls are the source listings made by this process (see sourcePolls).
	polls sourcePolls

	// deps tracks the APIs of other projects and starts their watches once served.
	deps *dependencies
	// crd says whether the installed BulkLoad CRD has every field of the operator's API.
	crd crdSchema
}

// scope carries one reconcile's object and what each phase found, so the status
// is computed once at the end without re-reading the API.
type scope struct {
	bl     *rdfv1.BulkLoad
	before rdfv1.BulkLoadStatus
	now    time.Time
	images specs.Images

	// wanted is the revision the spec/source asks for (resolveRevision).
	wanted dumpset.Revision
	// sourceProblem explains an unresolvable source (resolveRevision); sourceStalled says
	// that it needs a fix by someone (credentials, the spec), not time.
	sourceProblem string
	sourceStalled bool
	// workflow is the current build attempt's Workflow (ensureWorkflow).
	workflow *wfv1.Workflow
	// obs is what that workflow reports (observeWorkflow), or what the status
	// recorded of it once it is gone (recorded).
	obs      workflowObservation
	recorded bool
	// snapshot is the current build's VolumeSnapshot once readyToUse (the snapshot phase).
	snapshot *snapv1.VolumeSnapshot
	// outcome overrides the derived status when a phase decided it.
	outcome *outcome
	// stop ends the phase chain (the rest cannot run meaningfully).
	stop bool
	// requeueAfter is the soonest time something must be looked at again.
	requeueAfter time.Duration
	// effects (events, build metrics) run only once the status recording the
	// transition is stored: a reconcile working from a stale cache repeats the
	// transition, fails its optimistic-locked patch and must not count it twice.
	effects []func()
	// prunable are children retention no longer needs (prune), deleted after the patch.
	prunable []client.Object
	// forceDelete are build pods on a lost node, deleted after the patch without a grace
	// period: their kubelet cannot confirm a graceful deletion.
	forceDelete []client.Object
	// servingSettled: the serving workload runs the database it should serve, with no
	// pod of an older template left (serve); only then are older restored volumes pruned.
	servingSettled bool
	// servingIssue says why the serving workload does not serve the database it should
	// (serve, checkServedNode); the Ready condition carries it even while a build runs.
	servingIssue *outcome
}

func (s *scope) onCommit(f func()) { s.effects = append(s.effects, f) }

// said reports whether a condition of the status this reconcile started from matches:
// what was reported already is not logged or evented again. The conditions, not one of
// them: the same news is in Building while a database is served and in Reconciling
// while none is, and a serving problem is in Ready in both cases.
func (s *scope) said(match func(c metav1.Condition) bool) bool {
	return slices.ContainsFunc(s.before.Conditions, match)
}

func (s *scope) saidMessage(msg string) bool {
	return s.said(func(c metav1.Condition) bool { return c.Message == msg })
}

func (s *scope) saidReason(reasons ...string) bool {
	return s.said(func(c metav1.Condition) bool { return slices.Contains(reasons, c.Reason) })
}

// pruneLater queues a child for deletion after the patch, unless it is already going.
func (s *scope) pruneLater(obj client.Object) bool {
	if !obj.GetDeletionTimestamp().IsZero() {
		return false
	}
	s.prunable = append(s.prunable, obj)
	return true
}

type outcomeKind int

const (
	outcomeProgressing outcomeKind = iota
	outcomeStalled
	outcomeDependencyMissing
)

type outcome struct {
	kind    outcomeKind
	phase   rdfv1.Phase
	reason  string
	message string
	// keepServing: the build cannot go on, but the serving workload is still kept on
	// its database (the snapshots it is restored from exist).
	keepServing bool
}

func (s *scope) progress(phase rdfv1.Phase, reason, format string, args ...any) {
	s.outcome = &outcome{kind: outcomeProgressing, phase: phase, reason: reason, message: fmt.Sprintf(format, args...)}
}

func (s *scope) stall(reason, format string, args ...any) {
	s.outcome = &outcome{kind: outcomeStalled, phase: rdfv1.PhaseFailed, reason: reason, message: fmt.Sprintf(format, args...)}
}

func (s *scope) requeue(d time.Duration) {
	if d <= 0 {
		d = time.Millisecond
	}
	if s.requeueAfter == 0 || d < s.requeueAfter {
		s.requeueAfter = d
	}
}

type phaseFunc func(ctx context.Context, s *scope) error

// phase is one step of a reconcile: what it does and when it runs.
type phase struct {
	run  phaseFunc
	when phaseRun
}

// phaseRun says when a phase runs, given how the phases before it ended.
type phaseRun int

const (
	// untilStopped: only while no earlier phase stopped the pass (scope.stop).
	untilStopped phaseRun = iota
	// evenWhenBuildStopped: also when the build phases stopped but the serving workload is
	// still to be kept on its database (a retry waiting for its backoff, a build that
	// cannot go on while the snapshots exist); not when the operator cannot work at all
	// (a missing API, an invalid spec).
	evenWhenBuildStopped
)

func (w phaseRun) runs(s *scope) bool {
	if !s.stop {
		return true
	}
	return w == evenWhenBuildStopped && s.outcome != nil && (s.outcome.kind == outcomeProgressing || s.outcome.keepServing)
}

// phases is the reconcile's work in order, one file each: checkDependencies
// (dependencies.go, with the snapshot preflight of snapshot_support.go), validate
// (phase_validate.go), checkServedNode (node_loss.go), resolveRevision
// (phase_revision.go, revision_watch.go for watch mode), ensureWorkflow and
// observeWorkflow (phase_workflow.go), snapshot (phase_snapshot.go), recordBuild
// (phase_record.go), serve (phase_serve.go) and prune (phase_prune.go, whose picks
// patchStatus deletes).
func (r *BulkLoadReconciler) phases() []phase {
	return []phase{
		{r.checkDependencies, untilStopped},
		{r.validate, untilStopped},
		{r.checkServedNode, untilStopped},
		{r.resolveRevision, untilStopped},
		{r.ensureWorkflow, untilStopped},
		{r.observeWorkflow, untilStopped},
		{r.snapshot, untilStopped},
		{r.recordBuild, untilStopped},
		// The serving workload is kept on its database whatever the build does.
		{r.serve, evenWhenBuildStopped},
		{r.prune, untilStopped},
	}
}

// +kubebuilder:rbac:groups=rdf.bulkload.io,resources=bulkloads,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=rdf.bulkload.io,resources=bulkloads/status,verbs=get;patch
// +kubebuilder:rbac:groups=rdf.bulkload.io,resources=bulkloads/finalizers,verbs=update
// +kubebuilder:rbac:groups=argoproj.io,resources=workflows,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch;create;delete;patch
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;delete
// +kubebuilder:rbac:groups=snapshot.storage.k8s.io,resources=volumesnapshots,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=persistentvolumes,verbs=get
// +kubebuilder:rbac:groups="",resources=secrets;configmaps,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get,resourceNames=bulkloads.rdf.bulkload.io

// Reconcile drives one BulkLoad a step further: fetch → finalizer → the ordered phases
// (phases) → one status patch (patchStatus, which also deletes what prune picked). A
// deleted BulkLoad goes to reconcileDelete (bulkload_delete.go) instead.
func (r *BulkLoadReconciler) Reconcile(ctx context.Context, req reconcile.Request) (res reconcile.Result, reterr error) {
	bl := &rdfv1.BulkLoad{}
	if err := r.Get(ctx, req.NamespacedName, bl); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !bl.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, r.reconcileDelete(ctx, bl)
	}
	if !controllerutil.ContainsFinalizer(bl, Finalizer) {
		orig := bl.DeepCopy()
		controllerutil.AddFinalizer(bl, Finalizer)
		// The update event brings the object back; nothing else happens before the
		// finalizer is stored, so no child can outlive a deleted BulkLoad. The
		// optimistic lock keeps the patch from overwriting others' finalizers.
		err := r.Patch(ctx, bl, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
		if apierrors.IsConflict(err) {
			return reconcile.Result{RequeueAfter: conflictRequeue}, nil
		}
		return reconcile.Result{}, err
	}

	s := &scope{
		bl:     bl,
		before: *bl.Status.DeepCopy(),
		now:    r.clock().Now(),
		images: specs.ResolveImages(bl, r.DefaultFetchImage, r.DefaultLoaderImage, r.DefaultImagePullPolicy),
	}
	defer func() {
		err := r.patchStatus(ctx, s, reterr == nil)
		switch {
		case apierrors.IsConflict(err):
			// Worked from a stale copy: its decisions are redone on fresh data.
			res, reterr = reconcile.Result{RequeueAfter: conflictRequeue}, nil
		case err != nil:
			reterr = kerrors.NewAggregate([]error{reterr, err})
		}
	}()

	for _, p := range r.phases() {
		if !p.when.runs(s) {
			continue
		}
		if err := p.run(ctx, s); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{RequeueAfter: s.requeueAfter}, nil
}

// patchStatus computes the status from the scope and patches it if it changed,
// emitting an event for a phase transition.
func (r *BulkLoadReconciler) patchStatus(ctx context.Context, s *scope, succeeded bool) error {
	bl := s.bl
	r.computeStatus(s, succeeded)
	if succeeded {
		// observedGeneration says the status reflects the spec; only true after a clean pass.
		bl.Status.ObservedGeneration = bl.Generation
	}
	recordStatus(s)
	if t, ok := status.PhaseTransition(&s.before, &bl.Status); ok {
		eventType, reason := corev1.EventTypeNormal, "Phase"+string(t.To)
		if t.To == rdfv1.PhaseFailed {
			eventType = corev1.EventTypeWarning
		}
		r.event(s, eventType, reason, "phase %s → %s", orNone(t.From), t.To)
	}
	// With children to prune, patch even an unchanged status: the optimistic lock
	// then proves the decisions were made on the current object.
	if !equality.Semantic.DeepEqual(s.before, bl.Status) || len(s.prunable) > 0 {
		before := bl.DeepCopy()
		before.Status = s.before
		// The optimistic lock refuses a status computed from an outdated object.
		if err := r.Status().Patch(ctx, bl, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("cannot patch the status of BulkLoad %s/%s: %w", bl.Namespace, bl.Name, err)
		}
	}
	for _, f := range s.effects {
		f()
	}
	var errs []error
	for _, obj := range s.prunable {
		err := r.deleteChild(ctx, obj)
		if err == nil {
			ctrl.LoggerFrom(ctx).Info("pruned", "kind", kindOf(obj), "child", obj.GetName(), "revision", obj.GetLabels()[specs.LabelRevision])
		}
		errs = append(errs, err)
	}
	for _, obj := range s.forceDelete {
		if err := r.Delete(ctx, obj, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("cannot delete %s %s: %w", kindOf(obj), obj.GetName(), err))
			continue
		}
		ctrl.LoggerFrom(ctx).Info("removed a build pod on a lost node", "pod", obj.GetName())
	}
	return kerrors.NewAggregate(errs)
}

// computeStatus renders the phase and conditions from two judgements: the work (a
// phase's explicit outcome wins, otherwise the revisions recorded in the status say
// it) and what is served (servingVerdict).
func (r *BulkLoadReconciler) computeStatus(s *scope, succeeded bool) {
	st := &s.bl.Status
	v := status.Verdict{Building: st.SourceRevision != ""}
	switch o := s.outcome; {
	case o != nil:
		v.Phase, v.Reason, v.Message, v.Stalled = o.phase, o.reason, o.message, o.kind != outcomeProgressing
		if o.kind == outcomeDependencyMissing {
			// Nothing was built and nothing failed: the phase stays (Pending when there is none).
			v.Phase = st.Phase
			if v.Phase == "" || v.Phase == rdfv1.PhaseReady {
				v.Phase = rdfv1.PhasePending
			}
		}
	case st.SourceRevision != "":
		v.Phase, v.Reason, v.Message = rdfv1.PhasePending, status.ReasonBuilding, "building revision "+st.SourceRevision
	case st.LastFailedRevision != "" && st.LastFailedRevision == s.wanted.ID:
		v.Phase, v.Reason, v.Message, v.Stalled = rdfv1.PhaseFailed, status.ReasonBuildFailed, stalledMessage(st, s.now), true
		if f := st.LastFailure; f != nil {
			v.Reason = f.Reason
		}
	case st.LastBuiltRevision != "":
		v.Phase, v.Reason = rdfv1.PhaseReady, status.ReasonBuilt
	default:
		v.Phase, v.Reason, v.Message = rdfv1.PhasePending, status.ReasonWaitingForSource, orDefault(s.sourceProblem, "waiting for a complete dump set")
	}
	v.Serving, v.ServingReason, v.ServingMessage = servingVerdict(s, succeeded)
	status.Apply(st, s.bl.Generation, v)
}

// servingVerdict says whether the database the spec asks for is served (Ready), and
// which, or why not when the work does not say it: a snapshot of a revision the spec
// still asks for (in watch mode, any dump set's; in manual mode, one built from the
// spec's current build inputs, whatever trigger.rebuild says), handed to the serving
// workload and rolled out there (without spec.serving: ready to use).
func servingVerdict(s *scope, succeeded bool) (serving bool, reason, message string) {
	bl, st := s.bl, &s.bl.Status
	switch {
	case st.LastBuiltRevision == "" || st.CurrentSnapshot == "":
		return false, "", ""
	case s.servingIssue != nil:
		return false, s.servingIssue.reason, s.servingIssue.message
	case !s.servingSettled:
		// serve did not finish. After an error (retried at once), a database served before
		// is taken to be served still; when the operator cannot work at all (an invalid
		// spec, a missing API), nothing is known to be served.
		if c := meta.FindStatusCondition(s.before.Conditions, rdfv1.ConditionReady); c != nil && c.Status == metav1.ConditionTrue && !succeeded {
			return true, "", c.Message
		}
		return false, "", ""
	case bl.Spec.Trigger.Mode != rdfv1.TriggerWatch && s.wanted.ID != "" && dumpset.WithoutRebuild(s.wanted.ID) != dumpset.WithoutRebuild(st.LastBuiltRevision):
		return false, "", ""
	}
	msg := fmt.Sprintf("snapshot %s holds revision %s", st.CurrentSnapshot, st.LastBuiltRevision)
	if sv := bl.Spec.Serving; sv != nil && st.ServingClaim != "" {
		msg += fmt.Sprintf("; %s serves %s", sv.Name, st.ServingClaim)
		if st.ServedSnapshot != st.CurrentSnapshot {
			msg += fmt.Sprintf(", restored from snapshot %s (pinned by spec.serving.snapshotName)", st.ServedSnapshot)
		}
	}
	switch {
	case st.SourceRevision != "":
		msg += "; building revision " + st.SourceRevision + " (see the Building condition)"
	case st.LastFailedRevision != "" && st.LastFailedRevision == s.wanted.ID:
		msg += "; the build of revision " + st.LastFailedRevision + " failed (see the Stalled condition)"
	}
	if s.sourceProblem != "" {
		msg += "; " + s.sourceProblem
	}
	return true, "", msg
}

func failureMessage(f *rdfv1.BuildFailure, attempt int32) string {
	msg := fmt.Sprintf("step %s failed", f.Step)
	if f.ExitCode != nil {
		msg += fmt.Sprintf(" with exit code %d (%s)", *f.ExitCode, f.Reason)
	} else {
		msg += " (" + f.Reason + ")"
	}
	if attempt > 0 {
		msg += fmt.Sprintf(" in attempt %d", attempt)
	}
	if f.Message != "" {
		msg += ": " + f.Message
	}
	return msg
}

// event records an event about the BulkLoad once the status is stored.
func (r *BulkLoadReconciler) event(s *scope, eventType, reason, format string, args ...any) {
	if r.Recorder == nil {
		return
	}
	bl := s.bl
	s.onCommit(func() { r.Recorder.Eventf(bl, nil, eventType, reason, "Reconcile", format, args...) })
}

// eventNow records an event about something already done outside the BulkLoad (it
// does not depend on the status patch).
func (r *BulkLoadReconciler) eventNow(s *scope, eventType, reason, format string, args ...any) {
	if r.Recorder == nil {
		return
	}
	r.Recorder.Eventf(s.bl, nil, eventType, reason, "Reconcile", format, args...)
}

func (r *BulkLoadReconciler) clock() clock.PassiveClock {
	if r.Clock == nil {
		return clock.RealClock{}
	}
	return r.Clock
}

func orNone(p rdfv1.Phase) string {
	if p == "" {
		return "(none)"
	}
	return string(p)
}

// createIfMissing creates obj unless it exists; a concurrent or earlier create
// (the cache may lag behind) counts as success.
func (r *BulkLoadReconciler) createIfMissing(ctx context.Context, obj client.Object) (created bool, err error) {
	key := client.ObjectKeyFromObject(obj)
	existing := obj.DeepCopyObject().(client.Object)
	if err := r.Get(ctx, key, existing); err == nil {
		return false, nil
	} else if !apierrors.IsNotFound(err) {
		return false, err
	}
	if err := r.Create(ctx, obj); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// SetupWithManager registers the controller: BulkLoads, the Workflows and PVCs they
// own, their VolumeSnapshots (labelled, not owned, because of retention) and the
// serving workloads they name. The
// Workflow and VolumeSnapshot watches start once the API server serves those kinds:
// at once when Argo and the snapshot CRDs are installed, else when a BulkLoad finds
// them (checkDependencies), so the manager starts without them.
func (r *BulkLoadReconciler) SetupWithManager(mgr ctrl.Manager) error {
	snapshotToBulkLoad := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		name := o.GetLabels()[specs.LabelBulkLoad]
		if name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
	})
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &rdfv1.BulkLoad{}, servingIndex, indexServing); err != nil {
		return fmt.Errorf("cannot index BulkLoads by serving workload: %w", err)
	}
	// The serving workloads are the user's, unlabelled: they are watched as metadata
	// only (CacheOptions keeps no more than their names), and an event of one reaches
	// the BulkLoads that name it (the index), which read it uncached.
	workloadToBulkLoads := func(kind rdfv1.WorkloadKind) handler.EventHandler {
		return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			list := &rdfv1.BulkLoadList{}
			if err := mgr.GetClient().List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingFields{servingIndex: servingIndexValue(kind, o.GetName())}); err != nil {
				mgr.GetLogger().Error(err, "cannot list the BulkLoads serving a workload", "kind", kind, "namespace", o.GetNamespace(), "name", o.GetName())
				return nil
			}
			reqs := make([]reconcile.Request, len(list.Items))
			for i := range list.Items {
				reqs[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
			}
			return reqs
		})
	}
	c, err := ctrl.NewControllerManagedBy(mgr).
		For(&rdfv1.BulkLoad{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}, finalizerOrDeletionChanged{}))).
		Owns(&corev1.PersistentVolumeClaim{}).
		WatchesMetadata(&appsv1.Deployment{}, workloadToBulkLoads(rdfv1.WorkloadDeployment)).
		WatchesMetadata(&appsv1.StatefulSet{}, workloadToBulkLoads(rdfv1.WorkloadStatefulSet)).
		Named(ControllerName).
		Build(r)
	if err != nil {
		return fmt.Errorf("cannot build the %s controller: %w", ControllerName, err)
	}
	ownedByBulkLoad := handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &rdfv1.BulkLoad{}, handler.OnlyControllerOwner())
	if r.crd.read == nil {
		r.crd.read = readCRD(r.APIReader)
	}
	r.deps = newDependencies(mgr.GetRESTMapper(), c.Watch,
		&dependency{
			gvk:     workflowGVK,
			install: "install Argo Workflows (v3.5 or later: its CRDs and workflow-controller)",
			watch: func() source.Source {
				return source.Kind[client.Object](mgr.GetCache(), &wfv1.Workflow{}, ownedByBulkLoad)
			},
		},
		&dependency{
			gvk:     volumeSnapshotClassGVK,
			install: "install the CSI external-snapshotter's CRDs (snapshot.storage.k8s.io VolumeSnapshotClasses)",
		},
		&dependency{
			gvk:     volumeSnapshotGVK,
			install: "install the CSI external-snapshotter (the snapshot.storage.k8s.io CRDs and snapshot-controller) and a CSI driver that takes snapshots",
			watch: func() source.Source {
				return source.Kind[client.Object](mgr.GetCache(), &snapv1.VolumeSnapshot{}, snapshotToBulkLoad)
			},
		},
	)
	// What is served now is watched from the start: the controller waits for those caches.
	log := mgr.GetLogger().WithValues("controller", ControllerName)
	missing, err := r.deps.ensure(ctrl.LoggerInto(context.Background(), log))
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		log.Info("starting without watches of missing APIs; BulkLoads report them until they are installed",
			"message", missingMessage(missing, r.dependencyRecheck()))
	}
	return nil
}

// finalizerOrDeletionChanged passes updates that set the deletion timestamp or
// change finalizers (status-only updates, our own, are filtered out).
type finalizerOrDeletionChanged struct{ predicate.Funcs }

func (finalizerOrDeletionChanged) Update(e event.UpdateEvent) bool {
	if e.ObjectOld == nil || e.ObjectNew == nil {
		return false
	}
	return !e.ObjectOld.GetDeletionTimestamp().Equal(e.ObjectNew.GetDeletionTimestamp()) ||
		len(e.ObjectOld.GetFinalizers()) != len(e.ObjectNew.GetFinalizers())
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
