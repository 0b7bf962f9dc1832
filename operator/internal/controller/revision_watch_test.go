package controller

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/dumpset"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

// trigger.rebuild builds the same dump set again in watch mode too.
func TestRebuildInWatchMode(t *testing.T) {
	watcher := &sourceWatcherStandIn{revision: make(chan dumpset.Revision, 1), access: make(chan dumpset.Access, 1),
		current: dumpset.Revision{ID: "sha256:feedbeef", Source: true}}
	startController(t, func(r *BulkLoadReconciler) { r.Resolver = watcher })
	ns := newNamespace(t)
	g := NewWithT(t)
	g.Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dump-credentials"},
		StringData: map[string]string{"AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret"},
	})).To(Succeed())
	bl := newBulkLoad(ns, "watched-rebuild")
	bl.Spec.Serving = nil
	bl.Spec.Trigger = rdfv1.TriggerSpec{Mode: rdfv1.TriggerWatch, Interval: metav1.Duration{Duration: time.Hour}}
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	bl, wf := waitForWorkflow(t, key)
	g.Expect(bl.Status.SourceRevision).To(Equal("sha256:feedbeef"))
	argoControllerStandIn{t: t}.fail(client.ObjectKeyFromObject(wf), specs.StepLoad, 3)
	stalledWith(t, key, "BadInput")

	updateSpec(t, key, func(bl *rdfv1.BulkLoad) { bl.Spec.Trigger.Rebuild = "once more" })
	bl, wf2 := waitForWorkflow(t, key)
	g.Expect(bl.Status.SourceRevision).To(HavePrefix("sha256:feedbeef+rebuild:"))
	g.Expect(wf2.Name).NotTo(Equal(wf.Name))
	g.Expect(containsArgs(templateNamed(wf2, "fetch").Container.Args, "--expect-revision", "sha256:feedbeef")).To(BeTrue())
}

// countingSource stands in for the source watcher, counting listings; block makes a
// listing wait for its context to end (a hung endpoint).
type countingSource struct {
	calls atomic.Int64
	block bool
	rev   dumpset.Revision
}

func (c *countingSource) Resolve(ctx context.Context, _ *rdfv1.BulkLoad, _ dumpset.Access, _ dumpset.Settle, _ time.Time) (dumpset.Revision, error) {
	c.calls.Add(1)
	if c.block {
		<-ctx.Done()
		return dumpset.Revision{}, ctx.Err()
	}
	return c.rev, nil
}

func watchedBulkLoad(ns, name string) *rdfv1.BulkLoad {
	bl := newBulkLoad(ns, name)
	bl.Spec.Serving = nil
	bl.Spec.Source.CredentialsSecretRef = nil
	bl.Spec.Trigger = rdfv1.TriggerSpec{Mode: rdfv1.TriggerWatch, Interval: metav1.Duration{Duration: time.Hour}}
	return bl
}

// Reconciles (any event, any requeue) list the source at most once per trigger.interval.
func TestWatchListsTheSourceOncePerInterval(t *testing.T) {
	src := &countingSource{rev: dumpset.Revision{Reason: "SourceIncomplete", Message: "waiting for _SUCCESS", Settle: dumpset.Settle{Fingerprint: "sha256:f1"}}}
	clk := testingclock.NewFakePassiveClock(time.Now())
	startController(t, func(r *BulkLoadReconciler) { r.Resolver = src; r.Clock = clk })
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := watchedBulkLoad(ns, "paced")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.Source).NotTo(BeNil())
		g.Expect(bl.Status.Source.Fingerprint).To(Equal("sha256:f1"))
	})
	listed := src.calls.Load()
	for i := 0; i < 5; i++ {
		before := reconcileCount(g)
		annotate(t, key, i)
		eventually(t, func(g Gomega) { g.Expect(reconcileCount(g)).To(BeNumerically(">", before)) })
	}
	g.Expect(src.calls.Load()).To(Equal(listed), "reconciles within the interval do not list")
	c := meta.FindStatusCondition(getBulkLoad(g, key).Status.Conditions, rdfv1.ConditionReconciling)
	g.Expect(c.Message).To(ContainSubstring("waiting for _SUCCESS"), "the last listing's verdict stands")

	clk.SetTime(clk.Now().Add(time.Hour))
	annotate(t, key, 5)
	eventually(t, func(g Gomega) { g.Expect(src.calls.Load()).To(Equal(listed + 1)) })
}

// A listing that hangs is cut off after the listing timeout: the worker is free again
// and the BulkLoad says why.
func TestWatchListingIsBoundedInTime(t *testing.T) {
	src := &countingSource{block: true}
	startController(t, func(r *BulkLoadReconciler) { r.Resolver = src; r.SourceListTimeout = time.Second })
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := watchedBulkLoad(ns, "hung")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.Source).NotTo(BeNil())
		g.Expect(bl.Status.Source.Reason).To(Equal(status.ReasonSourceUnavailable))
		g.Expect(bl.Status.Source.Message).To(ContainSubstring("within 1s"))
	})
	// The single worker serves other BulkLoads meanwhile.
	other := newBulkLoad(ns, "manual-next-door")
	other.Spec.Serving = nil
	g.Expect(k8s.Create(ctx, other)).To(Succeed())
	waitForWorkflow(t, client.ObjectKeyFromObject(other))
}
