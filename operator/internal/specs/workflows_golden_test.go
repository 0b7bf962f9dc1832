package specs

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
)

// The Workflow the operator writes is read by whichever Argo Workflows release runs in the
// cluster, and Argo's CRD keeps unknown fields (x-kubernetes-preserve-unknown-fields), so a
// field an older workflow-controller does not know is neither refused by the API server nor
// read: it is dropped without a word. WorkflowsGoldenPath holds the Workflows Workflow writes
// for a matrix of BulkLoads, one JSON object a line ({"name", "workflow"}, the workflow as the
// operator's client sends it). This test keeps the file equal to Workflow; the modules under
// operator/test/argocompat/ decode every line strictly (unknown fields refused) into the Workflow
// types of each supported Argo release (see docs/argo-and-crds.md). Regenerate with
// `make generate-workflows` (go test ./internal/specs -run TestWorkflowsGolden -update).
const WorkflowsGoldenPath = "testdata/workflows.jsonl"

type workflowCase struct {
	Name     string          `json:"name"`
	Workflow json.RawMessage `json:"workflow"`
}

// workflowsMatrix is every way a BulkLoad reaches the Workflow: the source's options (keys,
// include globs, marker or manifest, credentials with default or own keys, a CA from a Secret or
// a ConfigMap, TLS verification off, the expected listing digest), the loader's policies and
// resources, the steps' own images, resources and pull policies, the placement of the build pods
// (node selector, tolerations, node and pod (anti-)affinity, exclusiveNode, pod metadata, a
// priority class, the deadline), the retry limit, the steps' metrics linger and the Argo
// controller's instance ID label.
func workflowsMatrix() []struct {
	name   string
	bl     *rdfv1.BulkLoad
	params BuildParams
} {
	minimal := func() *rdfv1.BulkLoad {
		return &rdfv1.BulkLoad{
			ObjectMeta: metav1.ObjectMeta{Namespace: "rdf", Name: "catalog", UID: "0b8e5d0c-6f2e-4a51-9a43-2d1f7c9e0a11"},
			Spec: rdfv1.BulkLoadSpec{
				Source: rdfv1.SourceSpec{
					Endpoint: "http://minio.rdf.svc:9000", Bucket: "dumps", Prefix: "catalog/2026-11-28/",
					Completion: &rdfv1.CompletionSpec{Marker: "catalog/2026-11-28/_SUCCESS"},
				},
				Database: rdfv1.DatabaseSpec{StorageClassName: "local-nvme", Size: resource.MustParse("10Gi")},
				Snapshot: rdfv1.SnapshotSpec{VolumeSnapshotClassName: "nvme-snapshots"},
				// the CRD's defaults, as the API server fills them in
				Retry: rdfv1.RetrySpec{Limit: 3, Backoff: metav1.Duration{Duration: 30 * time.Second}, MaxBackoff: metav1.Duration{Duration: 10 * time.Minute}},
				Build: rdfv1.BuildSpec{Deadline: &metav1.Duration{Duration: 24 * time.Hour}},
			},
		}
	}
	type tc = struct {
		name   string
		bl     *rdfv1.BulkLoad
		params BuildParams
	}
	var cases []tc
	// add a case: edit changes the BulkLoad, the build's parameters and the operator's default
	// pull policy (--step-image-pull-policy) from those of minimal
	add := func(name string, edit func(bl *rdfv1.BulkLoad, p *BuildParams, pull *corev1.PullPolicy)) {
		bl := minimal()
		p := BuildParams{Revision: "sha256:" + strings.Repeat("ab", 32), Attempt: 1}
		var pull corev1.PullPolicy
		if edit != nil {
			edit(bl, &p, &pull)
		}
		p.Images = ResolveImages(bl, "ghcr.io/rdf-bulkload/rdf-bulkload-operator:0.1.0", "ghcr.io/rdf-bulkload/rdf-bulkload-loader:0.1.0", pull)
		cases = append(cases, tc{name: name, bl: bl, params: p})
	}
	add("minimal", nil)
	add("source-everything", func(bl *rdfv1.BulkLoad, p *BuildParams, pull *corev1.PullPolicy) {
		bl.Spec.Source = testBulkLoad().Spec.Source // keys, include, manifest, credentials with own keys, CA ConfigMap
		p.ExpectRevision = "listing:" + strings.Repeat("cd", 32)
		p.StepMetricsLinger = 45 * time.Second
		*pull = corev1.PullIfNotPresent
	})
	add("ca-secret-default-credentials", func(bl *rdfv1.BulkLoad, _ *BuildParams, _ *corev1.PullPolicy) {
		bl.Spec.Source.CASecretRef = &rdfv1.KeyReference{Name: "minio-ca"}
		bl.Spec.Source.CredentialsSecretRef = &rdfv1.CredentialsSecretReference{Name: "rdf-dumps-credentials"}
	})
	add("insecure-keys-only", func(bl *rdfv1.BulkLoad, _ *BuildParams, _ *corev1.PullPolicy) {
		bl.Spec.Source.InsecureSkipTLSVerify = true
		bl.Spec.Source.Completion = nil
		bl.Spec.Source.Keys = []string{"catalog/a.nt.gz", "catalog/b.nq.zst"}
	})
	add("steps-resources-images", func(bl *rdfv1.BulkLoad, p *BuildParams, _ *corev1.PullPolicy) {
		q := resource.MustParse
		bl.Spec.Loader = rdfv1.LoaderSpec{
			Image: "registry.example.org/loader@sha256:" + strings.Repeat("0f", 32), ImagePullPolicy: corev1.PullAlways,
			MemoryBudget: ptr.To(q("48Gi")), Threads: 12, OnError: rdfv1.OnErrorSkip, MaxRejects: ptr.To(int64(1000)),
			Resources: corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceMemory: q("64Gi"), corev1.ResourceCPU: q("16"), corev1.ResourceEphemeralStorage: q("2Gi")},
				Requests: corev1.ResourceList{corev1.ResourceMemory: q("64Gi"), corev1.ResourceCPU: q("12")},
			},
		}
		bl.Spec.Fetch = rdfv1.FetchSpec{Image: "registry.example.org/fetch:2", ImagePullPolicy: corev1.PullIfNotPresent,
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: q("2Gi")}}}
		bl.Spec.Validate = rdfv1.ValidateSpec{Image: "registry.example.org/validate:2",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: q("8Gi"), corev1.ResourceCPU: q("2")}}}
		bl.Spec.Retry.Limit = 0
		p.Attempt = 4
		p.StepMetricsLinger = 1500 * time.Millisecond
	})
	add("placement", func(bl *rdfv1.BulkLoad, _ *BuildParams, _ *corev1.PullPolicy) {
		bl.Spec.Build = rdfv1.BuildSpec{
			Deadline:     &metav1.Duration{Duration: 6 * time.Hour},
			NodeSelector: map[string]string{"node.kubernetes.io/instance-type": "i4i.4xlarge", "storage": "nvme"},
			Tolerations: []corev1.Toleration{
				{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "rdf-build", Effect: corev1.TaintEffectNoSchedule},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(600))},
			},
			Affinity: &corev1.Affinity{
				NodeAffinity: &corev1.NodeAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
						MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"eu-west-1a", "eu-west-1b"}}},
						MatchFields:      []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"node-7"}}},
					}}},
					PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 50, Preference: corev1.NodeSelectorTerm{
						MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "nvme-generation", Operator: corev1.NodeSelectorOpGt, Values: []string{"3"}}},
					}}},
				},
				PodAffinity: &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 10, PodAffinityTerm: corev1.PodAffinityTerm{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "minio"}},
					Namespaces:    []string{"minio"},
					TopologyKey:   "topology.kubernetes.io/zone",
				}}}},
			},
			ExclusiveNode:     true,
			PodMetadata:       &rdfv1.BuildPodMetadata{Labels: map[string]string{"cost-center": "kg"}, Annotations: map[string]string{"karpenter.sh/do-not-disrupt": "false"}},
			PriorityClassName: "rdf-builds",
		}
	})
	// A field of the user's placement newer than some Argo release's Kubernetes types
	// (matchLabelKeys: Kubernetes 1.29; Argo v3.5 has 1.24's), passed on as the user wrote it.
	add("affinity-match-label-keys", func(bl *rdfv1.BulkLoad, _ *BuildParams, _ *corev1.PullPolicy) {
		bl.Spec.Build.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{
				LabelSelector:  &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "fuseki"}},
				TopologyKey:    corev1.LabelHostname,
				MatchLabelKeys: []string{"pod-template-hash"},
			}}},
		}}
	})
	add("exclusive-node-alone", func(bl *rdfv1.BulkLoad, _ *BuildParams, _ *corev1.PullPolicy) {
		bl.Spec.Build.ExclusiveNode = true
	})
	// the operator's --argo-instance-id
	add("argo-instance-id", func(_ *rdfv1.BulkLoad, p *BuildParams, _ *corev1.PullPolicy) {
		p.ArgoInstanceID = "rdf-builds"
	})
	return cases
}

// workflowCases computes the golden file's lines from the current Workflow.
func workflowCases(t *testing.T) []workflowCase {
	var cases []workflowCase
	for _, m := range workflowsMatrix() {
		wf := Workflow(m.bl, m.params)
		// what the controller adds before it creates the workflow (ensureWorkflow)
		wf.Annotations["rdf.bulkload.io/spec-digest"] = strings.Repeat("e", 16)
		data, err := json.Marshal(wf)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, workflowCase{Name: m.name, Workflow: data})
	}
	return cases
}

func encodeWorkflowCases(t *testing.T, cases []workflowCase) []byte {
	var buf bytes.Buffer
	for _, c := range cases {
		line, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

func TestWorkflowsGolden(t *testing.T) {
	checkGoldenLines(t, WorkflowsGoldenPath, encodeWorkflowCases(t, workflowCases(t)), "the Workflows the operator writes changed: "+
		"if the change is meant, run `make generate-workflows`, then `make test-argo-compat` (every supported "+
		"Argo release must still read them) and commit the file")
}

// The matrix reaches every optional part of the Workflow at least once, so that a field the
// operator only sometimes writes is decoded by the Argo compatibility tests too.
func TestWorkflowsMatrixCoversTheOptionalParts(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range workflowsMatrix() {
		wf := Workflow(m.bl, m.params)
		s := &wf.Spec
		seen["nodeSelector"] = seen["nodeSelector"] || len(s.NodeSelector) > 0
		seen["tolerations"] = seen["tolerations"] || len(s.Tolerations) > 0
		seen["affinity"] = seen["affinity"] || s.Affinity != nil
		seen["podPriorityClassName"] = seen["podPriorityClassName"] || s.PodPriorityClassName != ""
		seen["ca volume"] = seen["ca volume"] || len(s.Volumes) > 3
		seen["instanceid label"] = seen["instanceid label"] || wf.Labels[LabelArgoInstanceID] != ""
		for _, tp := range s.Templates {
			if tp.Container == nil {
				continue
			}
			seen["env"] = seen["env"] || len(tp.Container.Env) > 0
			seen["imagePullPolicy"] = seen["imagePullPolicy"] || tp.Container.ImagePullPolicy != ""
			seen["requests"] = seen["requests"] || len(tp.Container.Resources.Requests) > 0
			for _, a := range tp.Container.Args {
				seen[a] = true
			}
		}
	}
	for _, want := range []string{"nodeSelector", "tolerations", "affinity", "podPriorityClassName", "ca volume", "instanceid label", "env",
		"imagePullPolicy", "requests", "--key", "--include", "--marker", "--manifest", "--ca-file", "--insecure",
		"--expect-revision", "--metrics-linger", "--rejects", "--max-rejects"} {
		if !seen[want] {
			t.Errorf("no case of %s writes %s", WorkflowsGoldenPath, want)
		}
	}
}
