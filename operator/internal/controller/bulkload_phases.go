package controller

import (
	"context"
	"fmt"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

const (
	// stepPendingReportAfter is how long a step's pod may stay Pending (being
	// scheduled, pulling its image) before the BulkLoad's conditions say why.
	stepPendingReportAfter = 5 * time.Minute
)

// validate checks what the schema cannot: that every step has an image and that
// watch mode has a resolver.
func (r *BulkLoadReconciler) validate(_ context.Context, s *scope) error {
	switch {
	case s.images.Loader == "":
		s.stall(status.ReasonInvalidSpec, "spec.loader.image is empty and the operator has no default loader image (--loader-image)")
	case s.images.Fetch == "":
		s.stall(status.ReasonInvalidSpec, "spec.fetch.image is empty and the operator has no default fetch image (--fetch-image)")
	case s.bl.Spec.Trigger.Mode == rdfv1.TriggerWatch && r.Resolver == nil:
		s.stall(status.ReasonInvalidSpec, "trigger.mode is watch but this operator has no source watcher configured")
	default:
		return nil
	}
	s.stop = true
	return nil
}

// resolveRevision finds the revision the spec (manual) or the source (watch) asks
// for and decides whether it starts a build now, is queued behind the running
// build, or is already built (or failed) and needs nothing.
func (r *BulkLoadReconciler) resolveRevision(ctx context.Context, s *scope) error {
	bl, st := s.bl, &s.bl.Status
	if bl.Spec.Trigger.Mode == rdfv1.TriggerWatch {
		r.pollSource(ctx, s)
	} else {
		s.wanted = ManualRevision(bl)
		st.Source = nil
	}
	want := s.wanted.ID

	if st.SourceRevision != "" {
		// One build at a time: a different revision waits for the running build.
		switch {
		case want == "":
		case want == st.SourceRevision:
			st.QueuedRevision = ""
		case want != st.QueuedRevision:
			st.QueuedRevision = want
			r.event(s, corev1.EventTypeNormal, "RevisionQueued", "revision %s queued behind the build of %s", want, st.SourceRevision)
		}
		return nil
	}
	if want == "" || want == st.LastBuiltRevision || want == st.LastFailedRevision {
		if want != "" {
			st.QueuedRevision = ""
		}
		return nil
	}
	st.SourceRevision = want
	st.QueuedRevision = ""
	st.Attempt = 1
	st.RetryAfter = nil
	st.LastFailure = nil
	st.Workflow = nil
	st.BuildStartTime = &metav1.Time{Time: s.now}
	ctrl.LoggerFrom(ctx).Info("starting a build", "revision", want)
	r.event(s, corev1.EventTypeNormal, "BuildStarted", "building revision %s", want)
	return nil
}

// sourceAccess reads the credentials and CA the spec names, for the resolver.
func (r *BulkLoadReconciler) sourceAccess(ctx context.Context, bl *rdfv1.BulkLoad) (SourceAccess, error) {
	var a SourceAccess
	src := &bl.Spec.Source
	if ref := src.CredentialsSecretRef; ref != nil {
		sec := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: bl.Namespace, Name: ref.Name}, sec); err != nil {
			return a, fmt.Errorf("cannot read the credentials Secret %s: %w", ref.Name, err)
		}
		idKey, secretKey := orDefault(ref.AccessKeyIDKey, "AWS_ACCESS_KEY_ID"), orDefault(ref.SecretAccessKeyKey, "AWS_SECRET_ACCESS_KEY")
		a.AccessKeyID, a.SecretAccessKey = string(sec.Data[idKey]), string(sec.Data[secretKey])
		if a.AccessKeyID == "" || a.SecretAccessKey == "" {
			return a, fmt.Errorf("the credentials Secret %s lacks key %s or %s", ref.Name, idKey, secretKey)
		}
	}
	switch {
	case src.CASecretRef != nil:
		sec := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: bl.Namespace, Name: src.CASecretRef.Name}, sec); err != nil {
			return a, fmt.Errorf("cannot read the CA Secret %s: %w", src.CASecretRef.Name, err)
		}
		a.CABundle = sec.Data[orDefault(src.CASecretRef.Key, specs.CAFileName)]
	case src.CAConfigMapRef != nil:
		cm := &corev1.ConfigMap{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: bl.Namespace, Name: src.CAConfigMapRef.Name}, cm); err != nil {
			return a, fmt.Errorf("cannot read the CA ConfigMap %s: %w", src.CAConfigMapRef.Name, err)
		}
		a.CABundle = []byte(cm.Data[orDefault(src.CAConfigMapRef.Key, specs.CAFileName)])
	}
	return a, nil
}

// ensureWorkflow makes sure the running build has its volumes and the Workflow of
// its current attempt. The Workflow's name is derived from (revision, attempt), both
// kept in the status, so a restarted controller finds it instead of creating another.
func (r *BulkLoadReconciler) ensureWorkflow(ctx context.Context, s *scope) error {
	bl, st := s.bl, &s.bl.Status
	if st.SourceRevision == "" {
		return nil
	}
	if st.Attempt < 1 {
		st.Attempt = 1
	}
	params := specs.BuildParams{Revision: st.SourceRevision, Attempt: st.Attempt, Images: s.images}
	if s.wanted.Source && s.wanted.ID == st.SourceRevision {
		params.ExpectRevision = st.SourceRevision
	}
	want := specs.Workflow(bl, params)
	wf := &wfv1.Workflow{}
	err := r.Get(ctx, client.ObjectKeyFromObject(want), wf)
	switch {
	case apierrors.IsNotFound(err) && recordedFinished(st.Workflow, want.Name):
		// Deleted after it finished (its TTL, argo delete): its outcome is in the
		// status, and running it again would redo (or spoil) a finished build.
		s.obs = recordedObservation(st)
		s.recorded = true
		return nil
	case apierrors.IsNotFound(err):
		if vs, err := r.foreignSnapshot(ctx, bl, st.SourceRevision); err != nil {
			return fmt.Errorf("cannot read snapshot %s: %w", specs.SnapshotName(bl, st.SourceRevision), err)
		} else if vs != nil {
			return r.buildFailed(ctx, s, snapshotNameTaken(bl, vs, st.SourceRevision))
		}
		// The volumes come with the workflow (and stay across attempts); creating them
		// only here keeps a pass on stale data from recreating pruned volumes.
		for _, pvc := range []*corev1.PersistentVolumeClaim{specs.DataClaim(bl, st.SourceRevision), specs.ScratchClaim(bl, st.SourceRevision)} {
			if _, err := r.createIfMissing(ctx, pvc); err != nil {
				return fmt.Errorf("cannot create volume %s: %w", pvc.Name, err)
			}
		}
		if err := r.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("cannot create workflow %s: %w", want.Name, err)
		} else if err == nil {
			ctrl.LoggerFrom(ctx).Info("created the build workflow", "workflow", want.Name, "revision", st.SourceRevision, "attempt", st.Attempt)
			r.eventNow(s, corev1.EventTypeNormal, "WorkflowCreated", "attempt %d of revision %s: workflow %s", st.Attempt, st.SourceRevision, want.Name)
		}
		wf = want
	case err != nil:
		return fmt.Errorf("cannot read workflow %s: %w", want.Name, err)
	}
	s.workflow = wf
	recordWorkflow(st, wf)
	return nil
}

// observeWorkflow follows the workflow: the step maps to the phase; success leads
// to the snapshot; failure to a retry (retryable exit codes, attempts left) or the
// end of the build.
func (r *BulkLoadReconciler) observeWorkflow(ctx context.Context, s *scope) error {
	st := &s.bl.Status
	switch {
	case s.workflow != nil:
		s.obs = observeWorkflow(ctx, s.workflow)
		recordOutcome(st, &s.obs)
	case !s.recorded:
		return nil
	}
	obs := &s.obs
	switch {
	case !obs.Done:
		msg := fmt.Sprintf("attempt %d of revision %s: workflow %s", st.Attempt, st.SourceRevision, s.workflow.Name)
		if obs.Step != "" {
			msg += ", step " + obs.Step
		}
		reason := status.ReasonBuilding
		if p := obs.Pending; p != nil {
			if waited := s.now.Sub(p.Since); waited < stepPendingReportAfter {
				s.requeue(stepPendingReportAfter - waited)
			} else {
				reason = status.ReasonStepPodPending
				msg += fmt.Sprintf(": the %s pod %s has been Pending since %s: %s", p.Step, p.Pod,
					p.Since.UTC().Format(time.RFC3339), orDefault(p.Message, "Argo reports no reason yet"))
				if c := meta.FindStatusCondition(s.before.Conditions, rdfv1.ConditionReconciling); c == nil || c.Message != msg {
					ctrl.LoggerFrom(ctx).Info("build step pod pending", "workflow", s.workflow.Name, "pod", p.Pod, "since", p.Since, "message", p.Message)
					r.event(s, corev1.EventTypeWarning, status.ReasonStepPodPending, "%s", msg)
				}
			}
		}
		s.progress(obs.Phase, reason, "%s", msg)
		return nil
	case !obs.Succeeded:
		return r.buildFailed(ctx, s, obs)
	}
	return r.ensureSnapshot(ctx, s)
}

func (r *BulkLoadReconciler) buildFailed(ctx context.Context, s *scope, obs *workflowObservation) error {
	bl, st := s.bl, &s.bl.Status
	log := ctrl.LoggerFrom(ctx)
	f := obs.Failure
	st.LastFailure = f
	if f.Retryable && st.Attempt < bl.Spec.Retry.EffectiveBuildAttempts() {
		retryAt := obs.FinishedAt.Add(bl.Spec.Retry.BackoffFor(st.Attempt))
		if obs.FinishedAt.IsZero() {
			retryAt = s.now.Add(bl.Spec.Retry.BackoffFor(st.Attempt))
		}
		if s.now.Before(retryAt) {
			if st.RetryAfter == nil || !st.RetryAfter.Time.Equal(retryAt) {
				log.Info("retryable build failure: another attempt after the backoff", "revision", st.SourceRevision,
					"attempt", st.Attempt, "step", f.Step, "reason", f.Reason, "retryAfter", retryAt)
				st.RetryAfter = &metav1.Time{Time: retryAt}
				r.event(s, corev1.EventTypeWarning, "RetryScheduled", "%s; attempt %d starts after %s",
					failureMessage(f, st.Attempt), st.Attempt+1, retryAt.UTC().Format(time.RFC3339))
			}
			s.progress(rdfv1.PhasePending, status.ReasonRetryScheduled, "%s; attempt %d starts after %s",
				failureMessage(f, st.Attempt), st.Attempt+1, retryAt.UTC().Format(time.RFC3339))
			s.requeue(retryAt.Sub(s.now))
			s.stop = true
			return nil
		}
		// The backoff has passed: the next attempt's workflow is created on the next pass.
		st.Attempt++
		st.RetryAfter = nil
		s.progress(rdfv1.PhasePending, status.ReasonBuilding, "starting attempt %d of revision %s", st.Attempt, st.SourceRevision)
		s.requeue(0)
		s.stop = true
		return nil
	}
	// Final: a bad input, a missing source, exhausted resources, a refused pod, the
	// deadline, or no attempts left.
	msg := failureMessage(f, st.Attempt)
	log.Info("build failed finally", "revision", st.SourceRevision, "attempt", st.Attempt, "step", f.Step,
		"reason", f.Reason, "retryable", f.Retryable, "message", f.Message)
	r.event(s, corev1.EventTypeWarning, "BuildFailed", "revision %s: %s", st.SourceRevision, msg)
	r.finishBuild(s, "failed")
	st.LastFailedRevision = st.SourceRevision
	st.SourceRevision = ""
	st.RetryAfter = nil
	s.stall(f.Reason, "%s", msg)
	if st.QueuedRevision != "" {
		s.requeue(0)
	}
	return nil
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
		if err := r.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("cannot create snapshot %s: %w", want.Name, err)
		} else if err == nil {
			r.eventNow(s, corev1.EventTypeNormal, "SnapshotCreated", "snapshot %s of volume %s", want.Name, *want.Spec.Source.PersistentVolumeClaimName)
		}
		vs = want
	case err != nil:
		return fmt.Errorf("cannot read snapshot %s: %w", want.Name, err)
	}
	if vs.Status == nil || vs.Status.ReadyToUse == nil || !*vs.Status.ReadyToUse {
		return r.waitForSnapshot(ctx, s, vs)
	}
	s.snapshot = vs
	return nil
}

// recordBuild records a build whose snapshot is ready: the snapshot joins the
// history and becomes current. Handing it to the serving workload is serve's work,
// which also keeps it there.
func (r *BulkLoadReconciler) recordBuild(_ context.Context, s *scope) error {
	bl, st := s.bl, &s.bl.Status
	if s.snapshot == nil {
		return nil
	}
	rev := st.SourceRevision
	figures, err := s.loadFigures()
	if err != nil {
		r.event(s, corev1.EventTypeWarning, "ReportUnreadable", "%v", err)
		figures = nil
	}
	st.LastBuiltRevision = rev
	st.CurrentSnapshot = s.snapshot.Name
	rec := rdfv1.SnapshotRecord{Name: s.snapshot.Name, Revision: rev, CreationTime: metav1.Time{Time: s.now}}
	if ct := s.snapshot.Status.CreationTime; ct != nil {
		rec.CreationTime = *ct
	}
	if figures != nil {
		rec.Triples = figures.Triples + figures.Quads
		st.Load = figures
		loaded := float64(figures.Triples + figures.Quads)
		s.onCommit(func() { triplesLoadedTotal.WithLabelValues(bl.Namespace, bl.Name).Add(loaded) })
	}
	st.Snapshots = keepPinned(status.PushSnapshot(st.Snapshots, rec, bl.Spec.Snapshot.EffectiveKeep()), st.Snapshots, pinnedSnapshot(bl))
	st.LastFailure = nil
	st.LastFailedRevision = ""
	r.finishBuild(s, "succeeded")
	st.SourceRevision = ""
	r.event(s, corev1.EventTypeNormal, "BuildSucceeded", "revision %s is in snapshot %s", rev, s.snapshot.Name)
	if st.QueuedRevision != "" {
		s.requeue(0)
	}
	return nil
}

// keepPinned puts the pinned snapshot's record back when retention dropped it from
// the history: it stays (and is listed) while spec.serving.snapshotName names it.
func keepPinned(history, before []rdfv1.SnapshotRecord, pin string) []rdfv1.SnapshotRecord {
	if pin == "" {
		return history
	}
	for _, rec := range history {
		if rec.Name == pin {
			return history
		}
	}
	for _, rec := range before {
		if rec.Name == pin {
			return append(history, rec)
		}
	}
	return history
}

// pinnedSnapshot is spec.serving.snapshotName ("" when nothing is pinned).
func pinnedSnapshot(bl *rdfv1.BulkLoad) string {
	if bl.Spec.Serving == nil {
		return ""
	}
	return bl.Spec.Serving.SnapshotName
}

func (r *BulkLoadReconciler) finishBuild(s *scope, result string) {
	bl, st := s.bl, &s.bl.Status
	var seconds float64 = -1
	if st.BuildStartTime != nil {
		seconds = s.now.Sub(st.BuildStartTime.Time).Seconds()
	}
	s.onCommit(func() {
		buildsTotal.WithLabelValues(bl.Namespace, bl.Name, result).Inc()
		if seconds >= 0 {
			buildDurationSeconds.WithLabelValues(bl.Namespace, bl.Name, result).Observe(seconds)
		}
	})
}

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
			if rev == building {
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

func (r *BulkLoadReconciler) deleteChild(ctx context.Context, obj client.Object) error {
	if !obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	if err := r.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("cannot delete %s %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
	}
	return nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
