package specs

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/fetch"
)

func testBulkLoad() *rdfv1.BulkLoad {
	return &rdfv1.BulkLoad{
		ObjectMeta: metav1.ObjectMeta{Namespace: "rdf", Name: "wikidata", UID: "uid-1"},
		Spec: rdfv1.BulkLoadSpec{
			Source: rdfv1.SourceSpec{
				Endpoint: "https://s3.example.org", Bucket: "dumps", Prefix: "wd/",
				Keys: []string{"extra/a.nt.gz"}, Include: []string{"*.nt.gz", "*.ttl"},
				Completion:           &rdfv1.CompletionSpec{Manifest: &rdfv1.ManifestSpec{Key: "wd/SHA256SUMS"}},
				CredentialsSecretRef: &rdfv1.CredentialsSecretReference{Name: "creds", AccessKeyIDKey: "id", SecretAccessKeyKey: "secret"},
				CAConfigMapRef:       &rdfv1.KeyReference{Name: "ca-bundle", Key: "bundle.pem"},
			},
			Database: rdfv1.DatabaseSpec{StorageClassName: "nvme", Size: resource.MustParse("100Gi")},
			Loader: rdfv1.LoaderSpec{
				Image: "loader:1",
				Resources: corev1.ResourceRequirements{
					Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourceCPU: resource.MustParse("7500m")},
				},
			},
			Snapshot: rdfv1.SnapshotSpec{VolumeSnapshotClassName: "snaps"},
			Serving:  &rdfv1.ServingSpec{Name: "fuseki", VolumeName: "db", StorageClassName: "fast", AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany}},
			Retry:    rdfv1.RetrySpec{Limit: 2, Backoff: metav1.Duration{Duration: 10e9}, MaxBackoff: metav1.Duration{Duration: 60e9}},
		},
	}
}

func TestNamesAreValidAndStable(t *testing.T) {
	bl := testBulkLoad()
	bl.Name = strings.Repeat("a", 40) // the longest name the schema admits
	rev := "sha256:" + strings.Repeat("f", 64)
	for _, n := range []string{WorkflowName(bl, rev, 20), DataClaimName(bl, rev), ScratchClaimName(bl, rev), SnapshotName(bl, rev), ServingClaimName(bl, rev)} {
		if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
			t.Errorf("%q: %v", n, errs)
		}
	}
	if first := WorkflowName(bl, rev, 1); WorkflowName(bl, rev, 1) != first || first == WorkflowName(bl, rev, 2) {
		t.Error("workflow names must be deterministic per (revision, attempt)")
	}
	if ShortRevision("a") == ShortRevision("b") || len(ShortRevision("a")) != 10 {
		t.Error("short revisions must be 10 hex digits and differ per revision")
	}
	if errs := validation.IsValidLabelValue(ShortRevision(rev)); len(errs) > 0 {
		t.Error(errs)
	}
}

func TestWorkflowStepsAndArguments(t *testing.T) {
	bl := testBulkLoad()
	wf := Workflow(bl, BuildParams{Revision: "rev-1", Attempt: 2, Images: ResolveImages(bl, "operator:1", "default-loader", corev1.PullNever), ExpectRevision: "sha256:abc"})
	for _, tp := range wf.Spec.Templates {
		if tp.Container != nil && tp.Container.ImagePullPolicy != corev1.PullNever {
			t.Errorf("%s: the operator's default pull policy: %q", tp.Name, tp.Container.ImagePullPolicy)
		}
	}
	bl.Spec.Loader.ImagePullPolicy = corev1.PullAlways
	if im := ResolveImages(bl, "operator:1", "default-loader", corev1.PullNever); im.PullPolicy != corev1.PullAlways {
		t.Errorf("spec.loader.imagePullPolicy wins: %q", im.PullPolicy)
	}
	bl.Spec.Loader.ImagePullPolicy = ""
	// The fetch image has its own pull policy; the loader's does not apply to it.
	bl.Spec.Loader.ImagePullPolicy = corev1.PullAlways
	if im := ResolveImages(bl, "operator:1", "default-loader", corev1.PullNever); im.FetchPullPolicy != corev1.PullNever {
		t.Errorf("fetch defaults to the operator's pull policy, not the loader's: %q", im.FetchPullPolicy)
	}
	bl.Spec.Fetch.ImagePullPolicy = corev1.PullIfNotPresent
	im := ResolveImages(bl, "operator:1", "default-loader", corev1.PullNever)
	for _, tp := range Workflow(bl, BuildParams{Revision: "rev-1", Attempt: 1, Images: im}).Spec.Templates {
		want := corev1.PullAlways
		if tp.Name == StepFetch {
			want = corev1.PullIfNotPresent
		}
		if tp.Container != nil && tp.Container.ImagePullPolicy != want {
			t.Errorf("%s: pull policy %q, want %q", tp.Name, tp.Container.ImagePullPolicy, want)
		}
	}
	bl.Spec.Loader.ImagePullPolicy, bl.Spec.Fetch.ImagePullPolicy = "", ""
	if ttl := wf.Spec.TTLStrategy; ttl == nil || *ttl.SecondsAfterSuccess != 86400 || *ttl.SecondsAfterFailure != 7*86400 {
		t.Errorf("ttlStrategy: %+v", ttl)
	}
	if wf.Spec.PodGC == nil || wf.Spec.PodGC.Strategy != wfv1.PodGCOnPodSuccess {
		t.Errorf("podGC: %+v", wf.Spec.PodGC)
	}

	if wf.Name != WorkflowName(bl, "rev-1", 2) || wf.Namespace != "rdf" || wf.Labels[LabelAttempt] != "2" || wf.Annotations[AnnotationRevision] != "rev-1" {
		t.Fatalf("metadata: %+v", wf.ObjectMeta)
	}
	if len(wf.OwnerReferences) != 1 || !*wf.OwnerReferences[0].Controller || wf.OwnerReferences[0].Kind != "BulkLoad" {
		t.Errorf("owner: %+v", wf.OwnerReferences)
	}
	tmpl := map[string]int{}
	for i, tp := range wf.Spec.Templates {
		tmpl[tp.Name] = i
	}
	fetch := wf.Spec.Templates[tmpl["fetch"]]
	wantFetch := []string{
		"--endpoint", "https://s3.example.org", "--bucket", "dumps", "--prefix", "wd/", "--key", "extra/a.nt.gz",
		"--include", "*.nt.gz", "--include", "*.ttl", "--manifest", "wd/SHA256SUMS",
		"--ca-file", "/etc/rdf-bulkload/ca/ca.crt", "--expect-revision", "sha256:abc",
		// the label the serving pod's readiness check finds in the database's build report
		"--build-revision", ShortRevision("rev-1"),
		"--dest", "/scratch/input", "--report", "/scratch/fetch-report.json", "--metrics-addr", "0.0.0.0:9184",
	}
	if strings.Join(fetch.Container.Args, " ") != strings.Join(wantFetch, " ") {
		t.Errorf("fetch args:\n got %q\nwant %q", fetch.Container.Args, wantFetch)
	}
	// the operator's --step-metrics-linger reaches the fetch and load steps (the loader's in seconds)
	lingering := Workflow(bl, BuildParams{Revision: "rev-1", Attempt: 2, Images: ResolveImages(bl, "operator:1", "loader:1", ""), ExpectRevision: "sha256:abc", StepMetricsLinger: 90 * time.Second})
	if got := strings.Join(lingering.Spec.Templates[tmpl["fetch"]].Container.Args, " "); got != strings.Join(wantFetch, " ")+" --metrics-linger 1m30s" {
		t.Errorf("fetch args with a linger: %q", got)
	}
	loadArgs := strings.Join(wf.Spec.Templates[tmpl["load"]].Container.Args, " ")
	if got := strings.Join(lingering.Spec.Templates[tmpl["load"]].Container.Args, " "); strings.Contains(loadArgs, "--metrics-linger") ||
		got != strings.Replace(loadArgs, " /data/input", " --metrics-linger 90 /data/input", 1) {
		t.Errorf("load args with a linger: %q (without: %q)", got, loadArgs)
	}
	if fetch.Container.Image != "operator:1" {
		t.Errorf("fetch image %q", fetch.Container.Image)
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range fetch.Container.Env {
		env[e.Name] = e
	}
	if env["AWS_ACCESS_KEY_ID"].ValueFrom.SecretKeyRef.Key != "id" || env["AWS_SECRET_ACCESS_KEY"].ValueFrom.SecretKeyRef.Key != "secret" ||
		env["AWS_SECRET_ACCESS_KEY"].Value != "" {
		t.Errorf("credentials must come from the Secret: %+v", env)
	}

	load := wf.Spec.Templates[tmpl["load"]]
	script := strings.Join(append(load.Container.Command, load.Container.Args...), " ")
	want := "rdf-bulkload load --loc /data/db --tmpdir /scratch/tmp --memory 12GiB --threads 8 --on-error strict --jena 5 --report /data/report.json --summary /data/summary.json --source-report /scratch/fetch-report.json --metrics-addr 0.0.0.0:9184 /data/input"
	if script != want {
		t.Errorf("load script:\n got %q\nwant %q", script, want)
	}
	if load.Container.Image != "loader:1" || load.Container.Resources.Limits.Memory().String() != "16Gi" {
		t.Errorf("load container: %+v", load.Container)
	}
	// Both long steps serve metrics on a named port, and say so to Prometheus' pod discovery.
	for _, step := range []string{"fetch", "load"} {
		tp := wf.Spec.Templates[tmpl[step]]
		if len(tp.Container.Ports) != 1 || tp.Container.Ports[0].Name != "metrics" || tp.Container.Ports[0].ContainerPort != StepMetricsPort {
			t.Errorf("%s ports: %+v", step, tp.Container.Ports)
		}
		a := tp.Metadata.Annotations
		if a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != "9184" || a["prometheus.io/path"] != "/metrics" {
			t.Errorf("%s pod annotations: %+v", step, a)
		}
		// the chart's PodMonitor selects these and copies the BulkLoad's name into the metrics
		l := tp.Metadata.Labels
		if l[LabelManagedBy] != ManagedBy || l[LabelRole] != RoleBuild || l[LabelBulkLoad] != bl.Name || l[LabelRevision] == "" {
			t.Errorf("%s pod labels: %+v", step, l)
		}
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range load.Container.VolumeMounts {
		mounts[m.MountPath] = m
	}
	if m := mounts["/data/input"]; m.Name != "scratch" || m.SubPath != "input" || !m.ReadOnly {
		t.Errorf("inputs come read-only from the scratch volume, not the snapshotted one: %+v", m)
	}
	if mounts["/data"].Name != "data" || mounts["/scratch"].Name != "scratch" {
		t.Errorf("mounts: %+v", mounts)
	}

	validate := wf.Spec.Templates[tmpl["validate"]]
	if strings.Join(validate.Container.Command, " ")+" "+strings.Join(validate.Container.Args, " ") != "rdf-bulkload-validate --loc /data/db" {
		t.Errorf("validate: %v %v", validate.Container.Command, validate.Container.Args)
	}
	if validate.Container.Image != "loader:1" {
		t.Errorf("validate uses the loader image unless told otherwise: %q", validate.Container.Image)
	}
	if validate.Container.Resources.Limits.Memory().String() != "16Gi" {
		t.Errorf("validate falls back to the loader's resources")
	}

	var ca *corev1.Volume
	for i := range wf.Spec.Volumes {
		if wf.Spec.Volumes[i].Name == "ca" {
			ca = &wf.Spec.Volumes[i]
		}
	}
	if ca == nil || ca.ConfigMap == nil || ca.ConfigMap.Name != "ca-bundle" || ca.ConfigMap.Items[0].Key != "bundle.pem" || ca.ConfigMap.Items[0].Path != "ca.crt" {
		t.Errorf("CA volume: %+v", ca)
	}
}

func TestWorkflowSecurityContext(t *testing.T) {
	wf := Workflow(testBulkLoad(), BuildParams{Revision: "r", Attempt: 1, Images: Images{Fetch: "f", Loader: "l", Validate: "v"}})
	psc := wf.Spec.SecurityContext
	if !*psc.RunAsNonRoot || *psc.RunAsUser == 0 || *psc.FSGroup != NonRootUID || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context: %+v", psc)
	}
	for _, tp := range wf.Spec.Templates {
		if tp.Container == nil {
			continue
		}
		sc := tp.Container.SecurityContext
		if !*sc.RunAsNonRoot || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || sc.Capabilities.Drop[0] != "ALL" {
			t.Errorf("%s: %+v", tp.Name, sc)
		}
		hasTmp := false
		for _, m := range tp.Container.VolumeMounts {
			hasTmp = hasTmp || m.MountPath == "/tmp"
		}
		if !hasTmp {
			t.Errorf("%s: a read-only root filesystem needs a writable /tmp", tp.Name)
		}
		// the log's tail is the termination message of a failed step: its reason reaches the status
		if tp.Container.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
			t.Errorf("%s: terminationMessagePolicy %q", tp.Name, tp.Container.TerminationMessagePolicy)
		}
	}
}

// --argo-artifact-repository becomes the workflow's artifactRepositoryRef; without it the
// workflow-controller's default applies (no ref at all).
func TestWorkflowArtifactRepository(t *testing.T) {
	p := BuildParams{Revision: "r", Attempt: 1, Images: Images{Fetch: "f", Loader: "l", Validate: "v"}}
	if ref := Workflow(testBulkLoad(), p).Spec.ArtifactRepositoryRef; ref != nil {
		t.Fatalf("no repository given, yet the workflow names %+v", ref)
	}
	ref, err := ParseArtifactRepositoryRef("rdf-bulkload-artifact-repository/repository")
	if err != nil {
		t.Fatal(err)
	}
	p.ArtifactRepository = ref
	got := Workflow(testBulkLoad(), p).Spec.ArtifactRepositoryRef
	if got == nil || got.ConfigMap != "rdf-bulkload-artifact-repository" || got.Key != "repository" {
		t.Fatalf("artifactRepositoryRef %+v", got)
	}
	for _, bad := range []string{"name", "/key", "name/", "a/b/c"} {
		if _, err := ParseArtifactRepositoryRef(bad); err == nil {
			t.Errorf("%q accepted as CONFIGMAP/KEY", bad)
		}
	}
	if ref, err := ParseArtifactRepositoryRef(""); ref != nil || err != nil {
		t.Errorf("empty: %+v, %v", ref, err)
	}
}

func TestRetryStrategyFollowsExitCodes(t *testing.T) {
	bl := testBulkLoad()
	wf := Workflow(bl, BuildParams{Revision: "r", Attempt: 1, Images: Images{Fetch: "f", Loader: "l", Validate: "v"}})
	for _, tp := range wf.Spec.Templates {
		if tp.Container == nil {
			continue
		}
		rs := tp.RetryStrategy
		// No backoff: Argo waits it before evaluating the expression, so final exit
		// codes would wait too (the controller's backoff spaces the attempts).
		if rs == nil || rs.Limit.IntValue() != 2 || rs.Backoff != nil {
			t.Fatalf("%s: %+v", tp.Name, rs)
		}
	}
	const notRejected = `!(lastRetry.message contains "is forbidden:" || lastRetry.message contains "denied the request" || lastRetry.message contains "is invalid:")`
	if got := RetryExpression(StepLoad); got != `(lastRetry.status == "Error" && `+notRejected+`) || asInt(lastRetry.exitCode) in [6, 75, 137]` {
		t.Errorf("load: %s", got)
	}
	if got := RetryExpression(StepFetch); got != `(lastRetry.status == "Error" && `+notRejected+`) || asInt(lastRetry.exitCode) in [75]` {
		t.Errorf("fetch: %s", got)
	}
	// The expression and the classification agree.
	for _, step := range []string{StepFetch, StepLoad, StepValidate} {
		for _, code := range []int32{2, 3, 4, 5, 6, 70, 75, 137} {
			inExpr := false
			for _, c := range retryableCodes(step) {
				inExpr = inExpr || c == code
			}
			if inExpr != ClassifyExit(step, code).Retryable {
				t.Errorf("step %s code %d: retried by Argo %v, retryable %v", step, code, inExpr, ClassifyExit(step, code).Retryable)
			}
		}
	}
}

func TestClassifyExit(t *testing.T) {
	for _, tc := range []struct {
		step      string
		code      int32
		reason    string
		retryable bool
	}{
		{StepLoad, 3, "BadInput", false},
		{StepLoad, 4, "InputMissing", false},
		{StepLoad, 5, "ResourceExhausted", false},
		{StepLoad, 6, "Interrupted", true},
		{StepLoad, 70, "InternalError", false},
		{StepLoad, 75, "TransientIO", true},
		{StepFetch, 3, "SourceIncomplete", false},
		{StepFetch, 5, "ResourceExhausted", false},
		{StepLoad, 137, "Killed", true},
		{StepFetch, 137, "Killed", false},
		{StepValidate, 1, "ExitCode1", false},
	} {
		got := ClassifyExit(tc.step, tc.code)
		if got.Reason != tc.reason || got.Retryable != tc.retryable {
			t.Errorf("%s %d: %+v", tc.step, tc.code, got)
		}
	}
}

func TestLoaderArgsSkipPolicy(t *testing.T) {
	bl := testBulkLoad()
	bl.Spec.Loader.OnError = rdfv1.OnErrorSkip
	bl.Spec.Loader.MaxRejects = ptr.To(int64(0))
	bl.Spec.Loader.Threads = 3
	bl.Spec.Loader.MemoryBudget = ptr.To(resource.MustParse("1536Mi"))
	got := strings.Join(LoaderArgs(bl, 0), " ")
	want := "load --loc /data/db --tmpdir /scratch/tmp --memory 1536MiB --threads 3 --on-error skip --jena 5 --max-rejects 0 --rejects /data/rejects.jsonl --report /data/report.json --summary /data/summary.json --source-report /scratch/fetch-report.json --metrics-addr 0.0.0.0:9184 /data/input"
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{8 << 30: "8GiB", 1536 << 20: "1536MiB", 2 << 40: "2TiB", 4097: "4097", 3 << 10: "3KiB", 1e9: "1000000000"} {
		// The size grammar shared by the loader and fetch reads it back as the same number.
		if back, err := fetch.ParseSize(FormatBytes(n)); err != nil || back != n {
			t.Errorf("FormatBytes(%d) = %q reads back as %d, %v", n, FormatBytes(n), back, err)
		}
		if got := FormatBytes(n); got != want {
			t.Errorf("%d: %s, want %s", n, got, want)
		}
	}
}

func TestBuildVolumes(t *testing.T) {
	bl := testBulkLoad()
	data, scratch := DataClaim(bl, "r"), ScratchClaim(bl, "r")
	if *data.Spec.StorageClassName != "nvme" || data.Spec.Resources.Requests.Storage().String() != "100Gi" || data.Labels[LabelRole] != RoleData {
		t.Errorf("data: %+v", data)
	}
	if scratch.Spec.Resources.Requests.Storage().String() != "100Gi" {
		t.Errorf("scratch defaults to the database size: %v", scratch.Spec.Resources.Requests)
	}
	bl.Spec.Database.ScratchSize = ptr.To(resource.MustParse("300Gi"))
	bl.Spec.Database.StorageClassName = ""
	scratch = ScratchClaim(bl, "r")
	if scratch.Spec.Resources.Requests.Storage().String() != "300Gi" || scratch.Spec.StorageClassName != nil {
		t.Errorf("scratch: %+v", scratch.Spec)
	}
	for _, pvc := range []*corev1.PersistentVolumeClaim{data, scratch} {
		if len(pvc.OwnerReferences) != 1 {
			t.Errorf("build volumes are owned by the BulkLoad")
		}
	}
}

func TestDatabaseSnapshot(t *testing.T) {
	bl := testBulkLoad()
	vs := DatabaseSnapshot(bl, "r")
	if *vs.Spec.Source.PersistentVolumeClaimName != DataClaimName(bl, "r") || *vs.Spec.VolumeSnapshotClassName != "snaps" {
		t.Errorf("%+v", vs.Spec)
	}
	if len(vs.OwnerReferences) != 0 || vs.Labels[LabelBulkLoad] != "wikidata" || vs.Labels[LabelRole] != RoleSnapshot {
		t.Errorf("snapshots carry labels, no owner: %+v", vs.ObjectMeta)
	}
	bl.Spec.Snapshot.VolumeSnapshotClassName = ""
	if DatabaseSnapshot(bl, "r").Spec.VolumeSnapshotClassName != nil {
		t.Error("empty class means the default class")
	}
}

func TestServingClaim(t *testing.T) {
	bl := testBulkLoad()
	pvc := ServingClaim(bl, "r", ptr.To(resource.MustParse("120Gi")), "")
	if pvc.Spec.DataSource.Kind != "VolumeSnapshot" || pvc.Spec.DataSource.Name != SnapshotName(bl, "r") || *pvc.Spec.DataSource.APIGroup != "snapshot.storage.k8s.io" {
		t.Errorf("data source: %+v", pvc.Spec.DataSource)
	}
	if pvc.Spec.Resources.Requests.Storage().String() != "120Gi" || *pvc.Spec.StorageClassName != "fast" || pvc.Spec.AccessModes[0] != corev1.ReadOnlyMany {
		t.Errorf("spec: %+v", pvc.Spec)
	}
	if ServingClaim(bl, "r", ptr.To(resource.MustParse("1Gi")), "").Spec.Resources.Requests.Storage().String() != "100Gi" {
		t.Error("never smaller than database.size")
	}
	if len(pvc.OwnerReferences) != 0 {
		t.Error("the workload may outlive the BulkLoad")
	}
	if _, ok := pvc.Annotations[AnnotationSelectedNode]; ok {
		t.Error("no node without a node-bound source volume")
	}
	if got := ServingClaim(bl, "r", nil, "node-a").Annotations[AnnotationSelectedNode]; got != "node-a" {
		t.Errorf("the restored claim is provisioned on the snapshot's node: %q", got)
	}
}

func TestNodeBound(t *testing.T) {
	pv := func(key string, values ...string) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{NodeAffinity: &corev1.VolumeNodeAffinity{
			Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values},
			}}}},
		}}}
	}
	for _, c := range []struct {
		name string
		pv   *corev1.PersistentVolume
		want string
	}{
		{"topolvm", pv("topology.topolvm.io/node", "node-a"), "node-a"},
		{"hostname", pv("kubernetes.io/hostname", "node-a"), "node-a"},
		{"zone", pv("topology.kubernetes.io/zone", "eu-west-1a"), ""},
		{"two nodes", pv("kubernetes.io/hostname", "node-a", "node-b"), ""},
		{"no affinity", &corev1.PersistentVolume{}, ""},
	} {
		if got := NodeBound(c.pv, "node-a"); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestHandoffHoldsAndRollout(t *testing.T) {
	tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "db", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}}}
	h := Handoff{Volume: "db", Claim: "c", Revision: "rev"}
	if h.Holds(tmpl) {
		t.Error("an emptyDir is not the handoff")
	}
	got, _ := h.PodTemplate(tmpl)
	if !h.Holds(got) || (Handoff{Volume: "db", Claim: "other", Revision: "rev"}).Holds(got) || (Handoff{Volume: "db", Claim: "c", Revision: "rev2"}).Holds(got) {
		t.Error("Holds")
	}
	both := got.DeepCopy()
	both.Spec.Volumes[0].EmptyDir = &corev1.EmptyDirVolumeSource{}
	if h.Holds(both) {
		t.Error("a second source is a drift")
	}

	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(1))}}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1}
	if Rollout(d) == "" {
		t.Error("an unobserved generation is not rolled out")
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 2, UpdatedReplicas: 1, AvailableReplicas: 1}
	if !strings.Contains(Rollout(d), "1 old pods") {
		t.Errorf("old pod: %q", Rollout(d))
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 0}
	if Rollout(d) == "" {
		t.Error("an unavailable pod is not rolled out")
	}
	d.Status.AvailableReplicas = 1
	if Rollout(d) != "" {
		t.Errorf("rolled out: %q", Rollout(d))
	}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1, CurrentRevision: "a", UpdateRevision: "b"}
	if Rollout(sts) == "" {
		t.Error("a StatefulSet between revisions is not rolled out")
	}
	sts.Status.CurrentRevision = "b"
	if Rollout(sts) != "" {
		t.Errorf("rolled out: %q", Rollout(sts))
	}
}

func TestHandoffPodTemplate(t *testing.T) {
	tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
		{Name: "db", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}}}
	before, _ := json.Marshal(tmpl)
	got, err := (Handoff{Volume: "db", Claim: "wikidata-db-1", Revision: "rev"}).PodTemplate(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := json.Marshal(tmpl); string(after) != string(before) {
		t.Error("the input template must not change")
	}
	v := got.Spec.Volumes[1]
	if v.EmptyDir != nil || v.PersistentVolumeClaim.ClaimName != "wikidata-db-1" {
		t.Errorf("the volume source is replaced, not merged: %+v", v)
	}
	if got.Spec.Volumes[0].ConfigMap == nil || got.Annotations[AnnotationServedRevision] != ShortRevision("rev") {
		t.Errorf("%+v", got)
	}
	if ServedClaim(got, "db") != "wikidata-db-1" || ServedClaim(tmpl, "db") != "" {
		t.Error("ServedClaim")
	}
	// Idempotent: the second handoff of the same claim changes nothing.
	again, _ := (Handoff{Volume: "db", Claim: "wikidata-db-1", Revision: "rev"}).PodTemplate(got)
	a, _ := json.Marshal(again)
	b, _ := json.Marshal(got)
	if string(a) != string(b) {
		t.Error("handoff must be idempotent")
	}
	if _, err := (Handoff{Volume: "missing", Claim: "c", Revision: "rev"}).PodTemplate(tmpl); err == nil || !strings.Contains(err.Error(), `no volume "missing"`) {
		t.Errorf("missing volume: %v", err)
	}
}

// The apply configuration names only the handoff's fields: the volume by its name key
// (with the read-only flag the workload gives it) and the annotation, on the workload's kind.
func TestHandoffApplyNamesOnlyTheHandoff(t *testing.T) {
	h := Handoff{Volume: "db", Claim: "wikidata-db-1", Revision: "rev"}
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
		{Name: "db", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "old", ReadOnly: true}}},
	}}}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "fuseki"}, Spec: appsv1.StatefulSetSpec{Template: tmpl}}
	ac, err := h.Apply(sts)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(ac)
	want := `{"kind":"StatefulSet","apiVersion":"apps/v1","metadata":{"name":"fuseki","namespace":"ns"},"spec":{"template":{"metadata":{"annotations":{"rdf.bulkload.io/served-revision":"` +
		ShortRevision("rev") + `"}},"spec":{"volumes":[{"name":"db","persistentVolumeClaim":{"claimName":"wikidata-db-1","readOnly":true}}]}}}}`
	if string(got) != want {
		t.Errorf("apply configuration\n got %s\nwant %s", got, want)
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "fuseki"}}
	d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "db", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	ac, _ = h.Apply(d)
	if got, _ := json.Marshal(ac); !strings.Contains(string(got), `"kind":"Deployment"`) || strings.Contains(string(got), "readOnly") {
		t.Errorf("a Deployment's handoff: %s", got)
	}
	if _, err := h.Apply(&corev1.Pod{}); err == nil {
		t.Error("a Pod is not a serving workload")
	}
}

// Every step pod is placed by spec.build (Argo copies the workflow's nodeSelector,
// tolerations and affinity to each pod), the attempt is bounded by the deadline, and
// the fetch step, the first pod, mounts both build volumes so that a
// WaitForFirstConsumer class binds them on one node.
func TestWorkflowPlacementDeadlineAndFetchVolumes(t *testing.T) {
	bl := testBulkLoad()
	wf := Workflow(bl, BuildParams{Revision: "r", Attempt: 1, Images: Images{Fetch: "f", Loader: "l", Validate: "v"}})
	if wf.Spec.NodeSelector != nil || wf.Spec.Tolerations != nil || wf.Spec.Affinity != nil {
		t.Errorf("no placement asked for: %v %v %v", wf.Spec.NodeSelector, wf.Spec.Tolerations, wf.Spec.Affinity)
	}
	if wf.Spec.ActiveDeadlineSeconds == nil || *wf.Spec.ActiveDeadlineSeconds != 24*3600 {
		t.Errorf("default deadline: %v", wf.Spec.ActiveDeadlineSeconds)
	}

	bl.Spec.Build = rdfv1.BuildSpec{
		NodeSelector: map[string]string{"example.com/nvme": "true"},
		Tolerations:  []corev1.Toleration{{Key: "example.com/rdf-build", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}},
		}}},
		Deadline: &metav1.Duration{Duration: 90 * time.Minute},
	}
	wf = Workflow(bl, BuildParams{Revision: "r", Attempt: 1, Images: Images{Fetch: "f", Loader: "l", Validate: "v"}})
	if wf.Spec.NodeSelector["example.com/nvme"] != "true" || len(wf.Spec.Tolerations) != 1 || wf.Spec.Tolerations[0].Key != "example.com/rdf-build" ||
		wf.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Key != "zone" {
		t.Errorf("placement: %v %v %+v", wf.Spec.NodeSelector, wf.Spec.Tolerations, wf.Spec.Affinity)
	}
	if *wf.Spec.ActiveDeadlineSeconds != 5400 {
		t.Errorf("deadline: %d", *wf.Spec.ActiveDeadlineSeconds)
	}
	// Templates set none of their own: Argo would prefer a template's over the workflow's.
	for _, tp := range wf.Spec.Templates {
		if tp.NodeSelector != nil || tp.Tolerations != nil || tp.Affinity != nil || tp.ActiveDeadlineSeconds != nil {
			t.Errorf("%s overrides the workflow's placement or deadline", tp.Name)
		}
	}
	// The builder copies: changing the workflow does not change the BulkLoad.
	wf.Spec.NodeSelector["x"] = "y"
	if _, ok := bl.Spec.Build.NodeSelector["x"]; ok {
		t.Error("the workflow shares the spec's node selector map")
	}

	claims := map[string]string{}
	for _, v := range wf.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			claims[v.Name] = v.PersistentVolumeClaim.ClaimName
		}
	}
	var fetch *wfv1.Template
	for i := range wf.Spec.Templates {
		if wf.Spec.Templates[i].Name == StepFetch {
			fetch = &wf.Spec.Templates[i]
		}
	}
	mounted := map[string]corev1.VolumeMount{}
	for _, m := range fetch.Container.VolumeMounts {
		mounted[m.Name] = m
	}
	for name := range claims {
		if _, ok := mounted[name]; !ok {
			t.Errorf("the fetch pod does not mount volume %s (claim %s): it could bind on another node than the load pod needs", name, claims[name])
		}
	}
	if m := mounted["data"]; !m.ReadOnly || m.MountPath != "/data" {
		t.Errorf("fetch mounts the database volume read-only: %+v", m)
	}
}

func TestFetchResources(t *testing.T) {
	bl := testBulkLoad()
	bl.Spec.Loader.Resources = corev1.ResourceRequirements{}
	fetchOf := func() *corev1.Container {
		wf := Workflow(bl, BuildParams{Revision: "r", Attempt: 1, Images: Images{Fetch: "f", Loader: "l", Validate: "v"}})
		for _, tp := range wf.Spec.Templates {
			if tp.Name == StepFetch {
				return tp.Container
			}
		}
		t.Fatal("no fetch step")
		return nil
	}
	r := fetchOf().Resources
	if r.Requests.Cpu().String() != "250m" || r.Requests.Memory().String() != "256Mi" || r.Limits.Memory().String() != "1Gi" {
		t.Errorf("default fetch resources: %+v", r)
	}
	bl.Spec.Fetch.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}
	if r := fetchOf().Resources; r.Requests.Cpu().String() != "2" || r.Limits != nil || r.Requests.Memory().Sign() != 0 {
		t.Errorf("the spec's fetch resources replace the defaults: %+v", r)
	}
}

func TestOwnedByTellsBulkLoadsOfTheSameNameApart(t *testing.T) {
	old, reborn := testBulkLoad(), testBulkLoad()
	old.UID, reborn.UID = "uid-old", "uid-new"
	vs := DatabaseSnapshot(old, "r1")
	if vs.Labels[LabelBulkLoadUID] != "uid-old" || !OwnedBy(old, vs, nil) || OwnedBy(reborn, vs, nil) {
		t.Fatalf("labelled snapshot: %v", vs.Labels)
	}
	// An older operator's children: the controller reference, else the status decides.
	pvc := DataClaim(old, "r1")
	delete(pvc.Labels, LabelBulkLoadUID)
	if !OwnedBy(old, pvc, nil) || OwnedBy(reborn, pvc, func(string) bool { return true }) {
		t.Error("an unlabelled owned claim goes by its controller reference")
	}
	delete(vs.Labels, LabelBulkLoadUID)
	if OwnedBy(reborn, vs, func(string) bool { return false }) || !OwnedBy(reborn, vs, func(n string) bool { return n == vs.Name }) {
		t.Error("an unlabelled snapshot is the BulkLoad's only if its status records it")
	}
}

func stepTemplate(t *testing.T, wf *wfv1.Workflow, step string) *wfv1.Template {
	t.Helper()
	for i := range wf.Spec.Templates {
		if wf.Spec.Templates[i].Name == step {
			return &wf.Spec.Templates[i]
		}
	}
	t.Fatalf("no %s step", step)
	return nil
}

// The fetch pod is the first to mount the build volumes, so with WaitForFirstConsumer
// the node the scheduler picks for it is where the load must run: it requests what
// the load (and validate) step requests, or the volumes may bind to a node too small
// for the load, whose pod then stays Pending until the deadline.
func TestFetchRequestsWhatTheLoadNeeds(t *testing.T) {
	images := Images{Fetch: "f", Loader: "l", Validate: "v"}
	for _, tc := range []struct {
		name          string
		fetch, load   corev1.ResourceRequirements
		validate      corev1.ResourceRequirements
		wantCPU       string
		wantMemory    string
		wantMemoryLim string
		wantEphemeral string
	}{
		{
			name:    "load requests: the fetch pod asks for them, its memory limit raised to the request",
			load:    corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("200Gi")}},
			wantCPU: "32", wantMemory: "200Gi", wantMemoryLim: "200Gi",
		},
		{
			name:    "load limits only: they are its requests",
			load:    corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("7500m"), corev1.ResourceMemory: resource.MustParse("16Gi")}},
			wantCPU: "7500m", wantMemory: "16Gi", wantMemoryLim: "16Gi",
		},
		{
			name:    "a load smaller than the fetch step leaves the fetch step alone",
			load:    corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}},
			wantCPU: "250m", wantMemory: "256Mi", wantMemoryLim: "1Gi",
		},
		{
			name:     "a larger validate step counts too, and ephemeral storage",
			load:     corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}},
			validate: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("12Gi"), corev1.ResourceEphemeralStorage: resource.MustParse("5Gi")}},
			wantCPU:  "4", wantMemory: "12Gi", wantMemoryLim: "12Gi", wantEphemeral: "5Gi",
		},
		{
			name:    "a fetch limit without a request is what it asks for",
			fetch:   corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Gi")}},
			load:    corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("32Gi")}},
			wantCPU: "0", wantMemory: "0", wantMemoryLim: "64Gi",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bl := testBulkLoad()
			bl.Spec.Fetch.Resources, bl.Spec.Loader.Resources, bl.Spec.Validate.Resources = tc.fetch, tc.load, tc.validate
			wf := Workflow(bl, BuildParams{Revision: "r", Attempt: 1, Images: images})
			r := stepTemplate(t, wf, StepFetch).Container.Resources
			if got := r.Requests.Cpu().String(); got != tc.wantCPU {
				t.Errorf("fetch CPU request %s, want %s", got, tc.wantCPU)
			}
			if got := r.Requests.Memory().String(); got != tc.wantMemory {
				t.Errorf("fetch memory request %s, want %s", got, tc.wantMemory)
			}
			if got := r.Limits.Memory().String(); got != tc.wantMemoryLim {
				t.Errorf("fetch memory limit %s, want %s", got, tc.wantMemoryLim)
			}
			if tc.wantEphemeral != "" && r.Requests.StorageEphemeral().String() != tc.wantEphemeral {
				t.Errorf("fetch ephemeral-storage request %s, want %s", r.Requests.StorageEphemeral(), tc.wantEphemeral)
			}
			if !equalResources(stepTemplate(t, wf, StepLoad).Container.Resources, tc.load) {
				t.Errorf("the load step's resources changed: %+v", stepTemplate(t, wf, StepLoad).Container.Resources)
			}
		})
	}
	// The builder copies: the spec's resources stay as they were.
	bl := testBulkLoad()
	bl.Spec.Fetch.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
	Workflow(bl, BuildParams{Revision: "r", Attempt: 1, Images: images})
	if got := bl.Spec.Fetch.Resources.Requests.Cpu().String(); got != "1" {
		t.Errorf("the spec's fetch resources were changed to %s", got)
	}
}

func equalResources(a, b corev1.ResourceRequirements) bool {
	same := func(x, y corev1.ResourceList) bool {
		if len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || v.Cmp(w) != 0 {
				return false
			}
		}
		return true
	}
	return same(a.Requests, b.Requests) && same(a.Limits, b.Limits)
}

// spec.build.podMetadata and priorityClassName reach every step pod: Argo applies the
// workflow's podMetadata and podPriorityClassName to each pod, then a template's own
// metadata; no template sets a priority class that would override the workflow's.
func TestBuildPodMetadataAndPriority(t *testing.T) {
	images := Images{Fetch: "f", Loader: "l", Validate: "v"}
	bl := testBulkLoad()
	wf := Workflow(bl, BuildParams{Revision: "r", Attempt: 1, Images: images})
	md := wf.Spec.PodMetadata
	if md == nil {
		t.Fatal("no podMetadata: the autoscaler defaults and the build labels reach no pod")
	}
	for k, v := range BuildPodDefaultAnnotations {
		if md.Annotations[k] != v {
			t.Errorf("default annotation %s=%q, want %q", k, md.Annotations[k], v)
		}
	}
	if md.Annotations["karpenter.sh/do-not-disrupt"] != "true" || md.Annotations["cluster-autoscaler.kubernetes.io/safe-to-evict"] != "false" {
		t.Errorf("autoscaler annotations: %v", md.Annotations)
	}
	if md.Labels[LabelRole] != RoleBuild || md.Labels[LabelBulkLoadUID] != "uid-1" || md.Labels[LabelManagedBy] != ManagedBy {
		t.Errorf("every step pod carries the build labels (validate has no template metadata): %v", md.Labels)
	}
	if wf.Spec.PodPriorityClassName != "" {
		t.Errorf("no priority class asked for: %q", wf.Spec.PodPriorityClassName)
	}

	bl.Spec.Build.PriorityClassName = "rdf-builds"
	bl.Spec.Build.PodMetadata = &rdfv1.BuildPodMetadata{
		Labels: map[string]string{"team": "kg", LabelRole: "mine"},
		Annotations: map[string]string{
			"cost-center":                 "42",
			"karpenter.sh/do-not-disrupt": "false",
		},
	}
	wf = Workflow(bl, BuildParams{Revision: "r", Attempt: 1, Images: images})
	md = wf.Spec.PodMetadata
	if wf.Spec.PodPriorityClassName != "rdf-builds" {
		t.Errorf("podPriorityClassName %q", wf.Spec.PodPriorityClassName)
	}
	if md.Labels["team"] != "kg" || md.Annotations["cost-center"] != "42" {
		t.Errorf("the spec's pod metadata: %+v", md)
	}
	if md.Labels[LabelRole] != RoleBuild {
		t.Errorf("the operator's labels win over the spec's: role=%q", md.Labels[LabelRole])
	}
	if md.Annotations["karpenter.sh/do-not-disrupt"] != "false" || md.Annotations["cluster-autoscaler.kubernetes.io/safe-to-evict"] != "false" {
		t.Errorf("the spec's annotations win over the defaults, the other default stays: %v", md.Annotations)
	}
	for _, tp := range wf.Spec.Templates {
		if tp.PriorityClassName != "" {
			t.Errorf("template %s sets its own priority class", tp.Name)
		}
		for k := range tp.Metadata.Annotations {
			if _, ok := bl.Spec.Build.PodMetadata.Annotations[k]; ok {
				t.Errorf("template %s overrides annotation %s of spec.build.podMetadata", tp.Name, k)
			}
		}
	}
	bl.Spec.Build.PodMetadata.Labels["team"] = "changed"
	if md.Labels["team"] != "kg" {
		t.Error("the workflow shares the spec's label map")
	}
}

// exclusiveNode adds a required anti-affinity, by node, to other BulkLoads' build pods
// in every namespace, next to spec.build.affinity; this build's own pods are exempt.
func TestExclusiveNode(t *testing.T) {
	images := Images{Fetch: "f", Loader: "l", Validate: "v"}
	bl := testBulkLoad()
	bl.Spec.Build.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "noisy"}}, TopologyKey: corev1.LabelHostname,
	}}}}
	if wf := Workflow(bl, BuildParams{Revision: "r", Attempt: 1, Images: images}); len(wf.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Errorf("without exclusiveNode only the spec's affinity: %+v", wf.Spec.Affinity)
	}
	bl.Spec.Build.ExclusiveNode = true
	wf := Workflow(bl, BuildParams{Revision: "r", Attempt: 1, Images: images})
	terms := wf.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(terms) != 2 || terms[0].LabelSelector.MatchLabels["app"] != "noisy" {
		t.Fatalf("the spec's term and the exclusive one: %+v", terms)
	}
	if len(bl.Spec.Build.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Error("the spec's affinity was changed")
	}
	term := terms[1]
	if term.TopologyKey != corev1.LabelHostname || term.NamespaceSelector == nil || len(term.NamespaceSelector.MatchLabels)+len(term.NamespaceSelector.MatchExpressions) != 0 {
		t.Errorf("by node, in every namespace: %+v", term)
	}
	sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
	if err != nil {
		t.Fatal(err)
	}
	other := testBulkLoad()
	other.UID = "uid-2"
	for _, tc := range []struct {
		name    string
		labels  map[string]string
		matches bool
	}{
		{"another BulkLoad's build pod", buildPodMetadata(other, "r").Labels, true},
		{"this BulkLoad's build pod", wf.Spec.PodMetadata.Labels, false},
		{"this BulkLoad's next revision", buildPodMetadata(bl, "r2").Labels, false},
		{"a pod of something else", map[string]string{"app": "fuseki"}, false},
	} {
		if got := sel.Matches(labels.Set(tc.labels)); got != tc.matches {
			t.Errorf("%s: matched %v, want %v", tc.name, got, tc.matches)
		}
	}
}

// The load step's output parameter is stored in the Workflow object (capped by etcd), so
// it reads the loader's small summary, the file the load step writes with --summary, and
// never the full report, which grows with the number of inputs.
func TestLoadOutputParameterIsTheSummaryTheLoaderWrites(t *testing.T) {
	bl := testBulkLoad()
	wf := Workflow(bl, BuildParams{Revision: "rev-1", Attempt: 1, Images: ResolveImages(bl, "operator:1", "default-loader", corev1.PullNever)})
	for _, tp := range wf.Spec.Templates {
		if tp.Name != StepLoad {
			continue
		}
		params := tp.Outputs.Parameters
		if len(params) != 1 || params[0].Name != SummaryParameter || params[0].ValueFrom == nil {
			t.Fatalf("load outputs: %+v", params)
		}
		args := tp.Container.Args
		i := slices.Index(args, "--summary")
		if i < 0 || i+1 >= len(args) || args[i+1] != params[0].ValueFrom.Path {
			t.Errorf("the output parameter reads %q; the loader writes its summary per %v", params[0].ValueFrom.Path, args)
		}
		if j := slices.Index(args, "--report"); j < 0 || args[j+1] == params[0].ValueFrom.Path {
			t.Errorf("the full report must be written elsewhere than the output parameter: %v", args)
		}
		return
	}
	t.Fatal("no load template")
}

// With the operator's --argo-instance-id, every Workflow carries Argo's controller-instanceid
// label, which a workflow-controller configured with that instanceID requires (it ignores
// Workflows without it); without one, no such label, which an instanceID-less controller requires.
func TestWorkflowControllerInstanceIDLabel(t *testing.T) {
	images := Images{Fetch: "f", Loader: "l", Validate: "v"}
	wf := Workflow(testBulkLoad(), BuildParams{Revision: "r", Attempt: 1, Images: images})
	if v, ok := wf.Labels["workflows.argoproj.io/controller-instanceid"]; ok {
		t.Errorf("no instance ID configured, yet the workflow is labelled %q", v)
	}
	wf = Workflow(testBulkLoad(), BuildParams{Revision: "r", Attempt: 1, Images: images, ArgoInstanceID: "rdf"})
	if v := wf.Labels["workflows.argoproj.io/controller-instanceid"]; v != "rdf" {
		t.Errorf("controller-instanceid label %q, want rdf; labels %v", v, wf.Labels)
	}
	if wf.Labels[LabelBulkLoad] != "wikidata" || wf.Labels[LabelManagedBy] != ManagedBy {
		t.Errorf("the instance ID replaces none of the operator's labels: %v", wf.Labels)
	}
}
