package controller

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/dumpset"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/source"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
)

// The status gauges the chart's alerts use follow a watch-mode BulkLoad through a settling
// source, a snapshot that is not ready yet, a missing serving workload, the handoff and the
// workload's rollout, and a final failure. At the end the registry the manager serves is scraped over HTTP; with
// RDF_BULKLOAD_SCRAPE_DIR set the scrape is kept as operator.prom there (make test-alerts
// checks the names the rules and the dashboard use against it).
func TestStatusMetricsFollowTheBuild(t *testing.T) {
	watcher, clk, ns := startWatchedController(t, dumpset.Revision{Reason: source.ReasonSettling, Message: "dump set complete, listing changed 10s ago"})
	g := NewWithT(t)
	bl := newBulkLoad(ns, "observed")
	bl.Spec.Trigger = rdfv1.TriggerSpec{Mode: rdfv1.TriggerWatch, Interval: metav1.Duration{Duration: 60e9}}
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	gauge := func(v *prometheus.GaugeVec, lv ...string) float64 {
		return testutil.ToFloat64(v.WithLabelValues(append([]string{ns, bl.Name}, lv...)...))
	}
	// series of one BulkLoad in a vector (a missing series is not created by counting)
	series := func(v prometheus.Collector) int {
		n := 0
		ch := make(chan prometheus.Metric, 64)
		go func() { v.Collect(ch); close(ch) }()
		for m := range ch {
			if metricHasLabel(m, "bulkload", bl.Name) && metricHasLabel(m, "namespace", ns) {
				n++
			}
		}
		return n
	}

	// 1. the source settles: waiting for it, Reconciling (WaitingForSource), never built
	eventually(t, func(g Gomega) {
		g.Expect(gauge(waitingInfo, waitingSource)).To(Equal(1.0))
		g.Expect(gauge(conditionInfo, rdfv1.ConditionReconciling, "WaitingForSource")).To(Equal(1.0))
	})
	g.Expect(gauge(triggerInfo, "watch")).To(Equal(1.0))
	g.Expect(gauge(triggerInfo, "manual")).To(Equal(0.0))
	g.Expect(gauge(waitingInfo, waitingSnapshot)).To(Equal(0.0))
	g.Expect(series(lastSuccessTimestamp)).To(Equal(0), "no successful build yet")

	// 2. settled: the build runs, then waits for its snapshot
	watcher.revision <- dumpset.Revision{ID: "sha256:0bserved", Reason: source.ReasonSettled, Source: true}
	clk.SetTime(clk.Now().Add(61 * time.Second)) // the source is listed once per trigger.interval
	poke(t, key)
	bl, wf := waitForWorkflow(t, key)
	rev := bl.Status.SourceRevision
	eventually(t, func(g Gomega) { g.Expect(gauge(waitingInfo, waitingSource)).To(Equal(0.0)) })
	argoControllerStandIn{t: t}.succeed(client.ObjectKeyFromObject(wf), sampleReport)
	snapKey := client.ObjectKey{Namespace: ns, Name: specs.SnapshotName(bl, rev)}
	eventually(t, func(g Gomega) {
		g.Expect(k8s.Get(ctx, snapKey, &snapv1.VolumeSnapshot{})).To(Succeed())
		g.Expect(gauge(waitingInfo, waitingSnapshot)).To(Equal(1.0))
		g.Expect(gauge(phaseInfo, string(rdfv1.PhaseSnapshotting))).To(Equal(1.0))
	})
	g.Expect(gauge(waitingInfo, waitingServing)).To(Equal(0.0))

	// 3. the snapshot is ready, the serving workload (spec.serving: fuseki) does not exist
	csiSnapshotterStandIn{t: t}.ready(snapKey, "12Gi")
	eventually(t, func(g Gomega) {
		g.Expect(gauge(waitingInfo, waitingServing)).To(Equal(1.0))
		g.Expect(gauge(waitingInfo, waitingSnapshot)).To(Equal(0.0))
		g.Expect(gauge(conditionInfo, rdfv1.ConditionReconciling, "ServingPending")).To(Equal(1.0))
	})

	// 4. the workload appears: handed off, waiting for its rollout (no deployment controller in
	// envtest: the stand-in writes its status), then Ready with the newest snapshot's time
	g.Expect(k8s.Create(ctx, newServingDeployment(ns))).To(Succeed())
	poke(t, key)
	depKey := client.ObjectKey{Namespace: ns, Name: "fuseki"}
	eventually(t, func(g Gomega) {
		g.Expect(gauge(waitingInfo, waitingRollout)).To(Equal(1.0))
		g.Expect(gauge(waitingInfo, waitingServing)).To(Equal(0.0))
		g.Expect(gauge(phaseInfo, string(rdfv1.PhaseHandingOff))).To(Equal(1.0))
	})
	rollout := rolloutControllerStandIn{t: t}
	rollout.complete(depKey, rdfv1.WorkloadDeployment)
	poke(t, key)
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseReady))
		g.Expect(gauge(waitingInfo, waitingRollout)).To(Equal(0.0))
		g.Expect(gauge(conditionInfo, rdfv1.ConditionReady, "Built")).To(Equal(1.0))
		g.Expect(series(lastSuccessTimestamp)).To(Equal(1))
	})
	g.Expect(gauge(lastSuccessTimestamp)).To(Equal(float64(bl.Status.Snapshots[0].CreationTime.Unix())))
	g.Expect(series(conditionInfo)).To(Equal(4), "one series per condition: the previous reasons' series are gone")

	// 4b. a `helm upgrade` puts the chart's emptyDir back: the operator puts the volume back and
	// waits for the rollout again
	g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d := &appsv1.Deployment{}
		if err := k8s.Get(ctx, depKey, d); err != nil {
			return err
		}
		d.Spec.Template.Spec.Volumes[0].VolumeSource = corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
		return k8s.Update(ctx, d)
	})).To(Succeed())
	eventually(t, func(g Gomega) { g.Expect(gauge(waitingInfo, waitingRollout)).To(Equal(1.0)) })
	rollout.complete(depKey, rdfv1.WorkloadDeployment)
	poke(t, key)
	eventually(t, func(g Gomega) { g.Expect(gauge(waitingInfo, waitingRollout)).To(Equal(0.0)) })

	// 5. the next dump set's build fails finally: Stalled with the failure's reason
	watcher.revision <- dumpset.Revision{ID: "sha256:0bserved2", Reason: source.ReasonSettled, Source: true}
	clk.SetTime(clk.Now().Add(61 * time.Second))
	poke(t, key)
	var wf2Key client.ObjectKey
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.SourceRevision).To(Equal("sha256:0bserved2"))
		g.Expect(bl.Status.Workflow).NotTo(BeNil())
		wf2Key = client.ObjectKey{Namespace: ns, Name: bl.Status.Workflow.Name}
	})
	argoControllerStandIn{t: t}.fail(wf2Key, "load", 3)
	eventually(t, func(g Gomega) {
		g.Expect(gauge(conditionInfo, rdfv1.ConditionStalled, "BadInput")).To(Equal(1.0))
		g.Expect(gauge(phaseInfo, string(rdfv1.PhaseFailed))).To(Equal(1.0))
	})
	g.Expect(series(conditionInfo)).To(Equal(4))
	g.Expect(gauge(lastSuccessTimestamp)).To(Equal(float64(bl.Status.Snapshots[0].CreationTime.Unix())), "the last success stays")

	// what Prometheus gets from the manager's registry
	srv := httptest.NewServer(promhttp.HandlerFor(ctrlmetrics.Registry, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	text := string(body)
	for _, want := range []string{
		`rdf_bulkload_condition{bulkload="observed",condition="Stalled",namespace="` + ns + `",reason="BadInput"} 1`,
		`rdf_bulkload_waiting{bulkload="observed",for="serving",namespace="` + ns + `"} 0`,
		`rdf_bulkload_trigger_mode{bulkload="observed",mode="watch",namespace="` + ns + `"} 1`,
		`rdf_bulkload_last_successful_build_timestamp_seconds{bulkload="observed",namespace="` + ns + `"} `,
	} {
		g.Expect(text).To(ContainSubstring(want))
	}
	if dir := os.Getenv("RDF_BULKLOAD_SCRAPE_DIR"); dir != "" {
		g.Expect(os.WriteFile(filepath.Join(dir, "operator.prom"), body, 0o644)).To(Succeed())
	}
}

func metricHasLabel(m prometheus.Metric, name, value string) bool {
	pb := &dto.Metric{}
	if err := m.Write(pb); err != nil {
		return false
	}
	for _, l := range pb.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}
