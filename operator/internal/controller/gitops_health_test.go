package controller

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	lua "github.com/yuin/gopher-lua"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/dumpset"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/source"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

// argoCDHealthScript is the chart's Argo CD health check for BulkLoads.
var argoCDHealthScript = filepath.Join("..", "..", "..", "charts", "rdf-bulkload", "argocd", "health.lua")

// gitOpsHealth is what GitOps tools make of a BulkLoad: kstatus' verdict (Flux's health
// checks and wait, kstatus-based tools) and the chart's Argo CD health check.
type gitOpsHealth struct {
	kstatus, argoCD string
	message         string // the Argo CD health message
}

// healthOf computes kstatus with its library, and runs the chart's Lua health check as
// Argo CD runs a configured one (util/lua: gopher-lua with only the package, base and
// table libraries, the object as the global obj, one second at most).
func healthOf(t *testing.T, bl *rdfv1.BulkLoad) gitOpsHealth {
	t.Helper()
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(bl)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(rdfv1.GroupVersion.WithKind("BulkLoad"))
	res, err := kstatus.Compute(u)
	if err != nil {
		t.Fatalf("kstatus: %v", err)
	}
	script, err := os.ReadFile(argoCDHealthScript)
	if err != nil {
		t.Fatal(err)
	}
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := L.CallByParam(lua.P{Fn: L.NewFunction(lib.open), Protect: true}, lua.LString(lib.name)); err != nil {
			t.Fatal(err)
		}
	}
	luaCtx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	L.SetContext(luaCtx)
	L.SetGlobal("obj", luaValue(L, u.Object))
	if err := L.DoString(string(script)); err != nil {
		t.Fatalf("the Argo CD health check fails on %s: %v", bl.Name, err)
	}
	ret, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("the Argo CD health check returned %s, not a table", L.Get(-1).Type())
	}
	h := gitOpsHealth{kstatus: res.Status.String(), argoCD: L.GetField(ret, "status").String(), message: L.GetField(ret, "message").String()}
	switch h.argoCD {
	case "Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown":
	default:
		t.Errorf("the Argo CD health check returned status %q, which Argo CD takes for Unknown", h.argoCD)
	}
	return h
}

// luaValue converts a decoded JSON value as Argo CD's decodeValue does.
func luaValue(state *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case int64:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case []any:
		arr := state.CreateTable(len(v), 0)
		for _, item := range v {
			arr.Append(luaValue(state, item))
		}
		return arr
	case map[string]any:
		tbl := state.CreateTable(0, len(v))
		for k, item := range v {
			tbl.RawSetString(k, luaValue(state, item))
		}
		return tbl
	}
	return lua.LNil
}

// waitHealth waits until the BulkLoad satisfies cond, then checks what GitOps tools
// make of it.
func waitHealth(t *testing.T, key client.ObjectKey, what string, cond func(g Gomega, bl *rdfv1.BulkLoad), want gitOpsHealth) *rdfv1.BulkLoad {
	t.Helper()
	var bl *rdfv1.BulkLoad
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.ObservedGeneration).To(Equal(bl.Generation))
		cond(g, bl)
	})
	got := healthOf(t, bl)
	if got.kstatus != want.kstatus || got.argoCD != want.argoCD {
		t.Errorf("%s: kstatus %s, Argo CD %s (%s); want kstatus %s, Argo CD %s\nconditions: %+v",
			what, got.kstatus, got.argoCD, got.message, want.kstatus, want.argoCD, bl.Status.Conditions)
	}
	if want.message != "" {
		NewWithT(t).Expect(got.message).To(ContainSubstring(want.message), what)
	}
	return bl
}

func conditionIs(g Gomega, bl *rdfv1.BulkLoad, typ string, s metav1.ConditionStatus, reason string) {
	c := meta.FindStatusCondition(bl.Status.Conditions, typ)
	g.Expect(c).NotTo(BeNil(), typ)
	g.Expect(c.Status).To(Equal(s), typ)
	if reason != "" {
		g.Expect(c.Reason).To(Equal(reason), typ)
	}
}

var (
	inProgress = gitOpsHealth{kstatus: "InProgress", argoCD: "Progressing"}
	current    = gitOpsHealth{kstatus: "Current", argoCD: "Healthy"}
)

// A watched source's weekly dump set is built while the previous one is served: Ready
// stays True, kstatus says Current and Argo CD Healthy the whole time (GitOps tools do
// not wait out the build), Building says what runs. A failed build or a source that
// refuses the operator's credentials is Stalled (Failed, Degraded) while the served
// database stays served and Ready.
func TestGitOpsHealthFollowsWhatIsServed(t *testing.T) {
	watcher, clk, ns := startWatchedController(t, dumpset.Revision{Reason: "Incomplete", Message: "waiting for wikidata/2026-11-20/_SUCCESS"})
	g := NewWithT(t)
	g.Expect(k8s.Create(ctx, newServingDeployment(ns))).To(Succeed())
	rolloutControllerStandIn{t: t}.completeEvery(ns)
	bl := newBulkLoad(ns, "weekly")
	bl.Spec.Trigger = rdfv1.TriggerSpec{Mode: rdfv1.TriggerWatch, Interval: metav1.Duration{Duration: time.Minute}}
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	nextListing := func() {
		clk.SetTime(clk.Now().Add(61 * time.Second))
		poke(t, key)
	}

	waitHealth(t, key, "no complete dump set yet", func(g Gomega, bl *rdfv1.BulkLoad) {
		conditionIs(g, bl, rdfv1.ConditionReconciling, metav1.ConditionTrue, status.ReasonWaitingForSource)
	}, inProgress)

	watcher.revision <- dumpset.Revision{ID: "sha256:1111", Source: true}
	nextListing()
	waitHealth(t, key, "the first build", func(g Gomega, bl *rdfv1.BulkLoad) {
		conditionIs(g, bl, rdfv1.ConditionBuilding, metav1.ConditionTrue, "")
		conditionIs(g, bl, rdfv1.ConditionReady, metav1.ConditionFalse, "")
	}, inProgress)
	completeBuild(t, key)
	waitHealth(t, key, "the first database served", func(g Gomega, bl *rdfv1.BulkLoad) {
		conditionIs(g, bl, rdfv1.ConditionReady, metav1.ConditionTrue, status.ReasonBuilt)
		conditionIs(g, bl, rdfv1.ConditionBuilding, metav1.ConditionFalse, status.ReasonIdle)
	}, current)

	// The next dump set: built while the first is served.
	watcher.revision <- dumpset.Revision{ID: "sha256:2222", Source: true}
	nextListing()
	_, wf := waitForWorkflowOf(t, key, "sha256:2222")
	bl = waitHealth(t, key, "the next dump set builds while the first is served", func(g Gomega, bl *rdfv1.BulkLoad) {
		conditionIs(g, bl, rdfv1.ConditionBuilding, metav1.ConditionTrue, "")
		conditionIs(g, bl, rdfv1.ConditionReady, metav1.ConditionTrue, status.ReasonBuilt)
		conditionIs(g, bl, rdfv1.ConditionReconciling, metav1.ConditionFalse, "")
	}, gitOpsHealth{kstatus: "Current", argoCD: "Healthy", message: "building revision sha256:2222"})
	g.Expect(bl.Status.Phase).NotTo(Equal(rdfv1.PhaseReady), "the phase is the build's")

	// It fails for good (bad input): Stalled, the first database still served.
	argoControllerStandIn{t: t}.fail(wf, "load", 3)
	waitHealth(t, key, "a failed build while serving", func(g Gomega, bl *rdfv1.BulkLoad) {
		conditionIs(g, bl, rdfv1.ConditionStalled, metav1.ConditionTrue, "BadInput")
		conditionIs(g, bl, rdfv1.ConditionReady, metav1.ConditionTrue, status.ReasonBuilt)
		conditionIs(g, bl, rdfv1.ConditionBuilding, metav1.ConditionFalse, "")
	}, gitOpsHealth{kstatus: "Failed", argoCD: "Degraded", message: "still serving"})

	// The credentials stop working: a listing refused is Stalled too, not "waiting".
	watcher.failure <- &source.ObserveError{Class: source.Auth, Message: "Access Denied. (AccessDenied, HTTP 403)"}
	nextListing()
	bl = waitHealth(t, key, "the source refuses the credentials", func(g Gomega, bl *rdfv1.BulkLoad) {
		conditionIs(g, bl, rdfv1.ConditionStalled, metav1.ConditionTrue, status.ReasonSourceAccessDenied)
		conditionIs(g, bl, rdfv1.ConditionReady, metav1.ConditionTrue, status.ReasonBuilt)
	}, gitOpsHealth{kstatus: "Failed", argoCD: "Degraded", message: "SourceAccessDenied: "})
	g.Expect(meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionStalled).Message).To(ContainSubstring("AccessDenied"))
	g.Expect(bl.Status.Source.Reason).To(Equal(status.ReasonSourceAccessDenied))

	// A network failure is not someone's to fix: not Stalled.
	watcher.failure <- &source.ObserveError{Class: source.Transient, Message: "connection refused"}
	nextListing()
	waitHealth(t, key, "the source cannot be reached", func(g Gomega, bl *rdfv1.BulkLoad) {
		g.Expect(bl.Status.Source.Reason).To(Equal(status.ReasonSourceUnavailable))
		conditionIs(g, bl, rdfv1.ConditionStalled, metav1.ConditionFalse, "")
		conditionIs(g, bl, rdfv1.ConditionReady, metav1.ConditionTrue, status.ReasonBuilt)
	}, current)

	// Fixed, and a new dump set: built while the first is served, and served.
	watcher.revision <- dumpset.Revision{ID: "sha256:3333", Source: true}
	nextListing()
	waitForWorkflowOf(t, key, "sha256:3333")
	waitHealth(t, key, "the third dump set builds", func(g Gomega, bl *rdfv1.BulkLoad) {
		conditionIs(g, bl, rdfv1.ConditionStalled, metav1.ConditionFalse, "")
		conditionIs(g, bl, rdfv1.ConditionBuilding, metav1.ConditionTrue, "")
		conditionIs(g, bl, rdfv1.ConditionReady, metav1.ConditionTrue, status.ReasonBuilt)
	}, current)
	completeBuild(t, key)
	waitHealth(t, key, "the third dump set served", func(g Gomega, bl *rdfv1.BulkLoad) {
		g.Expect(bl.Status.LastBuiltRevision).To(Equal("sha256:3333"))
		g.Expect(bl.Status.ServedSnapshot).To(Equal(bl.Status.CurrentSnapshot))
		conditionIs(g, bl, rdfv1.ConditionReady, metav1.ConditionTrue, status.ReasonBuilt)
		conditionIs(g, bl, rdfv1.ConditionBuilding, metav1.ConditionFalse, "")
	}, current)
}

// In manual mode, the spec says what the database holds: a change to what is built makes
// the served database not the one asked for (Ready False, InProgress, Progressing) until
// its own is served; trigger.rebuild builds the same again while it stays Ready.
func TestGitOpsHealthAfterSpecChanges(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	g.Expect(k8s.Create(ctx, newServingDeployment(ns))).To(Succeed())
	rolloutControllerStandIn{t: t}.completeEvery(ns)
	bl := newBulkLoad(ns, "manual")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	completeBuild(t, key)
	first := waitHealth(t, key, "built and served", func(g Gomega, bl *rdfv1.BulkLoad) {
		conditionIs(g, bl, rdfv1.ConditionReady, metav1.ConditionTrue, status.ReasonBuilt)
	}, current)

	updateSpec(t, key, func(bl *rdfv1.BulkLoad) { bl.Spec.Trigger.Rebuild = "2026-11-28" })
	waitHealth(t, key, "a rebuild of the same spec", func(g Gomega, bl *rdfv1.BulkLoad) {
		g.Expect(bl.Status.SourceRevision).NotTo(BeEmpty())
		conditionIs(g, bl, rdfv1.ConditionBuilding, metav1.ConditionTrue, "")
		conditionIs(g, bl, rdfv1.ConditionReady, metav1.ConditionTrue, status.ReasonBuilt)
	}, current)
	completeBuild(t, key)
	rebuilt := waitHealth(t, key, "the rebuild served", func(g Gomega, bl *rdfv1.BulkLoad) {
		g.Expect(bl.Status.LastBuiltRevision).NotTo(Equal(first.Status.LastBuiltRevision))
		g.Expect(bl.Status.ServedSnapshot).To(Equal(bl.Status.CurrentSnapshot))
		conditionIs(g, bl, rdfv1.ConditionReady, metav1.ConditionTrue, status.ReasonBuilt)
	}, current)

	updateSpec(t, key, func(bl *rdfv1.BulkLoad) { bl.Spec.Loader.Threads = 8 })
	waitHealth(t, key, "a spec change to what is built", func(g Gomega, bl *rdfv1.BulkLoad) {
		g.Expect(bl.Status.SourceRevision).NotTo(BeEmpty())
		conditionIs(g, bl, rdfv1.ConditionReady, metav1.ConditionFalse, "")
		conditionIs(g, bl, rdfv1.ConditionReconciling, metav1.ConditionTrue, "")
		conditionIs(g, bl, rdfv1.ConditionBuilding, metav1.ConditionTrue, "")
	}, inProgress)
	completeBuild(t, key)
	waitHealth(t, key, "the changed spec's database served", func(g Gomega, bl *rdfv1.BulkLoad) {
		g.Expect(bl.Status.LastBuiltRevision).NotTo(Equal(rebuilt.Status.LastBuiltRevision))
		conditionIs(g, bl, rdfv1.ConditionReady, metav1.ConditionTrue, status.ReasonBuilt)
	}, current)
}

// waitForWorkflowOf waits for the build workflow of the revision.
func waitForWorkflowOf(t *testing.T, key client.ObjectKey, rev string) (*rdfv1.BulkLoad, client.ObjectKey) {
	t.Helper()
	var bl *rdfv1.BulkLoad
	var wfKey client.ObjectKey
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.SourceRevision).To(Equal(rev))
		g.Expect(bl.Status.Workflow).NotTo(BeNil())
		wfKey = client.ObjectKey{Namespace: key.Namespace, Name: bl.Status.Workflow.Name}
	})
	return bl, wfKey
}

// The ignore rules docs/operator.md gives GitOps tools, taken from the doc itself, cover what
// the handoff really changes in the serving Deployment, as its managed fields record it: Argo
// CD's managedFieldsManagers names the manager that owns the restored volume's claim and the
// served-revision annotation, and Flux's JSON pointers hold every field that manager owns
// (a sync or helm upgrade that reverts one of them would otherwise fight the operator).
func TestTheDocsGitOpsIgnoresCoverWhatTheHandoffOwns(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "operator.md"))
	if err != nil {
		t.Fatal(err)
	}
	argoCD := regexp.MustCompile(`managedFieldsManagers: \[([^\]]+)\]`).FindSubmatch(doc)
	flux := regexp.MustCompile(`ignore:\s*\n\s*- paths: \[([^\]]+)\]`).FindSubmatch(doc)
	if argoCD == nil || flux == nil {
		t.Fatal("docs/operator.md has no Argo CD managedFieldsManagers or Flux driftDetection ignore paths")
	}
	managers := strings.Split(strings.ReplaceAll(string(argoCD[1]), " ", ""), ",")
	var pointers []string
	for _, p := range strings.Split(string(flux[1]), ",") {
		pointers = append(pointers, strings.Trim(strings.TrimSpace(p), `"`))
	}

	key, depKey := handedOff(t, "gitops-ignore")
	g := NewWithT(t)
	bl := getBulkLoad(g, key)
	d := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, depKey, d)).To(Succeed())
	owned := &fieldpath.Set{}
	for _, m := range d.ManagedFields {
		if !slices.Contains(managers, m.Manager) || m.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		g.Expect(set.FromJSON(m.FieldsV1.GetRawReader())).To(Succeed())
		owned = owned.Union(set)
	}
	// Argo CD: what the handoff sets is owned by a manager the rule names.
	claim, err := fieldpath.MakePath("spec", "template", "spec", "volumes",
		&value.FieldList{{Name: "name", Value: value.NewValueInterface("databases")}}, "persistentVolumeClaim", "claimName")
	g.Expect(err).NotTo(HaveOccurred())
	revision, err := fieldpath.MakePath("spec", "template", "metadata", "annotations", specs.AnnotationServedRevision)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(owned.Has(claim)).To(BeTrue(), "Argo CD's managedFieldsManagers %v do not own the restored volume's claim (%s)", managers, bl.Status.ServingClaim)
	g.Expect(owned.Has(revision)).To(BeTrue(), "Argo CD's managedFieldsManagers %v do not own %s", managers, specs.AnnotationServedRevision)
	// Flux: every field the operator owns lies under an ignored JSON pointer.
	n := 0
	owned.Leaves().Iterate(func(p fieldpath.Path) {
		n++
		ptr := ""
		for _, pe := range p {
			if pe.FieldName == nil {
				break // a list element: the pointer to the list covers it
			}
			ptr += "/" + strings.ReplaceAll(strings.ReplaceAll(*pe.FieldName, "~", "~0"), "/", "~1")
		}
		covered := slices.ContainsFunc(pointers, func(ignored string) bool { return ptr == ignored || strings.HasPrefix(ptr, ignored+"/") })
		g.Expect(covered).To(BeTrue(), "the operator owns %s (%s), which Flux's ignore paths %v do not cover", p, ptr, pointers)
	})
	g.Expect(n).To(BeNumerically(">", 1))
}
