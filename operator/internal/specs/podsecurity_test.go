package specs

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v4/util/expr/argoexpr"
	"github.com/argoproj/argo-workflows/v4/util/expr/env"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"
)

// argoStepPod builds the pod Argo v4's workflow-controller makes for a container
// template (workflow/controller/workflowpod.go createWorkflowPod): the workflow's
// pod security context and scheduling constraints, an "init" init container and a
// "wait" container running the executor image with the executor's security context
// (none unless the controller's config sets one), then "main"; podSpecPatch is not
// applied yet.
func argoStepPod(wf *wfv1.Workflow, tmpl *wfv1.Template) *corev1.Pod {
	exec := func(name string) corev1.Container {
		return corev1.Container{
			Name: name, Image: "quay.io/argoproj/argoexec:v4.0.7", Command: []string{"argoexec", name},
			VolumeMounts: []corev1.VolumeMount{{Name: "var-run-argo", MountPath: "/var/run/argo"}},
		}
	}
	main := *tmpl.Container.DeepCopy()
	main.Command = append([]string{"/var/run/argo/argoexec", "emissary", "--"}, main.Command...)
	main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: "var-run-argo", MountPath: "/var/run/argo"})
	volumes := []corev1.Volume{
		{Name: "var-run-argo", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "tmp-dir-argo", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: wf.Name + "-" + tmpl.Name + "-1234", Namespace: wf.Namespace},
		Spec: corev1.PodSpec{
			RestartPolicy:         corev1.RestartPolicyNever,
			ServiceAccountName:    wf.Spec.ServiceAccountName,
			SecurityContext:       wf.Spec.SecurityContext.DeepCopy(),
			NodeSelector:          wf.Spec.NodeSelector,
			Tolerations:           wf.Spec.Tolerations,
			Affinity:              wf.Spec.Affinity,
			ActiveDeadlineSeconds: wf.Spec.ActiveDeadlineSeconds,
			InitContainers:        []corev1.Container{exec("init")},
			Containers:            []corev1.Container{exec("wait"), main},
			Volumes:               append(volumes, wf.Spec.Volumes...),
		},
	}
}

// applyPodSpecPatch applies a podSpecPatch as Argo v4 does (workflow/util
// ApplyPodSpecPatch): YAML to JSON, checked to be a PodSpec, then a strategic merge
// patch into the pod spec.
func applyPodSpecPatch(t *testing.T, spec corev1.PodSpec, patch string) corev1.PodSpec {
	t.Helper()
	patchJSON, err := yaml.YAMLToJSON([]byte(patch))
	if err != nil {
		t.Fatalf("podSpecPatch is not YAML: %v", err)
	}
	if err := json.Unmarshal(patchJSON, &corev1.PodSpec{}); err != nil {
		t.Fatalf("podSpecPatch is not a PodSpec (Argo refuses it): %v", err)
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := strategicpatch.StrategicMergePatch(specJSON, patchJSON, corev1.PodSpec{})
	if err != nil {
		t.Fatalf("strategic merge of podSpecPatch: %v", err)
	}
	var out corev1.PodSpec
	if err := json.Unmarshal(merged, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// restrictedVerdict evaluates a pod with the Pod Security admission's own checks at
// level restricted, latest version (what a namespace labelled
// pod-security.kubernetes.io/enforce=restricted enforces).
func restrictedVerdict(t *testing.T, pod *corev1.Pod) policy.AggregateCheckResult {
	t.Helper()
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	lv := psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}
	return policy.AggregateCheckResults(evaluator.EvaluatePod(lv, &pod.ObjectMeta, &pod.Spec))
}

// Every step pod, as Argo makes it from the workflow (init and wait containers added,
// then the workflow's podSpecPatch applied), passes the restricted Pod Security
// Standard; without the patch Argo's containers would make the API server refuse it.
func TestStepPodsPassRestrictedPodSecurity(t *testing.T) {
	bl := testBulkLoad()
	bl.Spec.Build.NodeSelector = map[string]string{"example.com/nvme": "true"}
	wf := Workflow(bl, BuildParams{Revision: "r", Attempt: 1, Images: Images{Fetch: "f", Loader: "l", Validate: "v"}})
	if wf.Spec.PodSpecPatch == "" {
		t.Fatal("the workflow has no podSpecPatch: Argo's init and wait containers run without a security context")
	}
	steps := 0
	for i := range wf.Spec.Templates {
		tmpl := &wf.Spec.Templates[i]
		if tmpl.Container == nil {
			continue
		}
		steps++
		pod := argoStepPod(wf, tmpl)

		unpatched := restrictedVerdict(t, pod)
		if unpatched.Allowed || !strings.Contains(unpatched.ForbiddenDetail(), `"init"`) || !strings.Contains(unpatched.ForbiddenDetail(), `"wait"`) {
			t.Fatalf("%s: the test pod should fail without the patch because of init and wait: %+v", tmpl.Name, unpatched)
		}

		before := pod.Spec.DeepCopy()
		pod.Spec = applyPodSpecPatch(t, pod.Spec, wf.Spec.PodSpecPatch)
		if got := restrictedVerdict(t, pod); !got.Allowed {
			t.Errorf("%s: the step pod violates restricted: %s: %s", tmpl.Name, got.ForbiddenReason(), got.ForbiddenDetail())
		}
		// The patch only adds security settings: no container appears or loses its image,
		// main keeps its read-only root filesystem.
		names := func(cs []corev1.Container) (out []string) {
			for _, c := range cs {
				if c.Image == "" {
					t.Errorf("%s: container %s has no image after the patch", tmpl.Name, c.Name)
				}
				out = append(out, c.Name)
			}
			return out
		}
		if !slices.Equal(names(pod.Spec.Containers), names(before.Containers)) || !slices.Equal(names(pod.Spec.InitContainers), names(before.InitContainers)) {
			t.Errorf("%s: the patch changed the containers: %v %v", tmpl.Name, names(pod.Spec.InitContainers), names(pod.Spec.Containers))
		}
		main := pod.Spec.Containers[1]
		if main.Name != "main" || main.SecurityContext.ReadOnlyRootFilesystem == nil || !*main.SecurityContext.ReadOnlyRootFilesystem {
			t.Errorf("%s: main lost its security context: %+v", tmpl.Name, main.SecurityContext)
		}
		for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
			sc := c.SecurityContext
			if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
				t.Errorf("%s: container %s: %+v", tmpl.Name, c.Name, sc)
			}
		}
		if pod.Spec.NodeSelector["example.com/nvme"] != "true" {
			t.Errorf("%s: the node selector is lost: %v", tmpl.Name, pod.Spec.NodeSelector)
		}
	}
	if steps != 3 {
		t.Fatalf("%d step templates", steps)
	}
}

// The retry expression, evaluated the way Argo v4 evaluates retryStrategy.expression
// (workflow/controller operator.go: the lastRetry scope through util/expr/env into
// expr), retries evicted or lost pods and the step's retryable exit codes, and neither
// final exit codes nor a pod the API server refused.
func TestRetryExpressionInArgosEvaluator(t *testing.T) {
	psa := `pods "wikidata-0123456789-1-fetch-42" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (containers "init", "wait" must set securityContext.allowPrivilegeEscalation=false)`
	webhook := `admission webhook "policy.example.com" denied the request: images must come from registry.example.com`
	for _, tc := range []struct {
		step, status, exitCode, message string
		retry                           bool
	}{
		{StepLoad, "Failed", "75", "Error (exit code 75)", true},
		{StepLoad, "Failed", "6", "Error (exit code 6)", true},
		{StepLoad, "Failed", "3", "Error (exit code 3)", false},
		{StepFetch, "Failed", "6", "Error (exit code 6)", false},
		{StepFetch, "Failed", "75", "", true},
		{StepLoad, "Error", "-1", "pod deleted", true},
		{StepLoad, "Error", "-1", "The node was low on resource: ephemeral-storage.", true},
		{StepFetch, "Error", "-1", psa, false},
		{StepValidate, "Error", "-1", webhook, false},
		{StepLoad, "Error", "-1", `Pod "wikidata-0123456789-1-load-7" is invalid: spec.tolerations[0].operator: Unsupported value: "Sometimes"`, false},
	} {
		scope := env.GetFuncMap(map[string]any{
			"retries":            "0",
			"lastRetry.exitCode": tc.exitCode,
			"lastRetry.status":   tc.status,
			"lastRetry.duration": "12.5",
			"lastRetry.message":  tc.message,
		})
		got, err := argoexpr.EvalBool(RetryExpression(tc.step), scope)
		if err != nil {
			t.Fatalf("Argo cannot evaluate %q: %v", RetryExpression(tc.step), err)
		}
		if got != tc.retry {
			t.Errorf("%s %s exit %s %q: retried %v, want %v", tc.step, tc.status, tc.exitCode, tc.message, got, tc.retry)
		}
		if tc.status == "Error" && IsPodRejected(tc.message) == tc.retry {
			t.Errorf("IsPodRejected(%q) disagrees with the retry expression", tc.message)
		}
	}
}
