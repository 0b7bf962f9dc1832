//go:build e2e

package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// A real Prometheus in the test's namespace, scraping through the scrape configs that
// examples/prometheus documents (the annotation route, for users without the prometheus-operator;
// confined to the namespace, the build pods every second) and evaluating the chart's alerting
// rules, as rendered from its PrometheusRule.
const prometheusName = "prometheus"

type promSetup struct {
	names []string // the metric names the chart's rules and dashboard use
}

func (s *suite) startPrometheus(ctx context.Context) *promSetup {
	image := os.Getenv("E2E_PROMETHEUS_IMAGE")
	if image == "" {
		s.t.Fatalf("E2E_PROMETHEUS_IMAGE is not set (hack/install-prometheus.sh builds it)")
	}
	root := repoRoot(s.t)
	// the chart's rules as a plain rule file, and the names its rules and dashboard use
	dir := s.t.TempDir()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "hack", "test-alerts.sh"), "--render", dir)
	cmd.Env = append(os.Environ(), "HELM="+s.helm)
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("hack/test-alerts.sh --render: %v\n%s", err, out)
	}
	rules, err := os.ReadFile(filepath.Join(dir, "rules.yaml"))
	if err != nil {
		s.t.Fatal(err)
	}
	names, err := os.ReadFile(filepath.Join(dir, "names.txt"))
	if err != nil {
		s.t.Fatal(err)
	}
	// examples/prometheus's scrape configs, confined to this namespace
	raw, err := os.ReadFile(filepath.Join(root, "examples", "prometheus", "scrape_configs.yaml"))
	if err != nil {
		s.t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		s.t.Fatal(err)
	}
	for _, job := range cfg["scrape_configs"].([]any) {
		j := job.(map[string]any)
		for _, sd := range j["kubernetes_sd_configs"].([]any) {
			sd.(map[string]any)["namespaces"] = map[string]any{"names": []any{s.ns}}
		}
		// a test build's load step lasts seconds: scrape it every second
		if j["job_name"] == "rdf-bulkload-build-pods" {
			j["scrape_interval"] = "1s"
		}
	}
	cfg["global"] = map[string]any{"scrape_interval": "5s", "evaluation_interval": "5s"}
	cfg["rule_files"] = []any{"/etc/prometheus/rules.yaml"}
	promYAML, _ := yaml.Marshal(cfg)

	create := func(what string, err error) {
		if err != nil {
			s.t.Fatalf("prometheus %s: %v", what, err)
		}
	}
	_, err = s.kube.CoreV1().ConfigMaps(s.ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: prometheusName},
		Data: map[string]string{"prometheus.yml": string(promYAML), "rules.yaml": string(rules)}}, metav1.CreateOptions{})
	create("config", err)
	// what service discovery needs, in this namespace only
	_, err = s.kube.RbacV1().Roles(s.ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: prometheusName},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "services", "endpoints"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}},
		}}, metav1.CreateOptions{})
	create("role", err)
	_, err = s.kube.RbacV1().RoleBindings(s.ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: prometheusName},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: prometheusName},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: scraperSA, Namespace: s.ns}}}, metav1.CreateOptions{})
	create("role binding", err)
	labels := map[string]string{"app.kubernetes.io/name": prometheusName}
	no, yes, uid := false, true, int64(65534)
	_, err = s.kube.AppsV1().Deployments(s.ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: prometheusName, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: scraperSA,
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes, RunAsUser: &uid, FSGroup: &uid,
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers: []corev1.Container{{
						Name: "prometheus", Image: image, ImagePullPolicy: corev1.PullPolicy(env("E2E_IMAGE_PULL_POLICY", "IfNotPresent")),
						Args: []string{"--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus",
							"--web.listen-address=:9090"},
						Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 9090}},
						SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no, ReadOnlyRootFilesystem: &yes,
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
						VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/prometheus"}, {Name: "data", MountPath: "/prometheus"}},
					}},
					Volumes: []corev1.Volume{
						{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: prometheusName}}}},
						{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					},
				},
			},
		},
	}, metav1.CreateOptions{})
	create("deployment", err)
	s.waitDeployment(ctx, prometheusName, 3*time.Minute)
	s.t.Logf("Prometheus %s scrapes the namespace with examples/prometheus/scrape_configs.yaml and evaluates the chart's rules", image)
	return &promSetup{names: strings.Fields(string(names))}
}

// promAPI GETs Prometheus' HTTP API path with params and decodes its data field into out.
func (s *suite) promAPI(ctx context.Context, path string, params url.Values, out any) {
	s.t.Helper()
	addr, stop, err := s.portForward(s.runningPod(ctx, "app.kubernetes.io/name="+prometheusName), 9090)
	if err != nil {
		s.t.Fatal(err)
	}
	defer stop()
	resp, err := http.Get("http://" + addr + path + "?" + params.Encode())
	if err != nil {
		s.t.Fatalf("Prometheus %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		s.t.Fatalf("Prometheus %s %v: HTTP %d %s", path, params, resp.StatusCode, body)
	}
	if err := json.Unmarshal(r.Data, out); err != nil {
		s.t.Fatal(err)
	}
}

type promSeries struct {
	Metric map[string]string `json:"metric"`
	Values [][2]any          `json:"values"`
	Value  [2]any            `json:"value"`
}

func sampleValue(v [2]any) float64 {
	f, _ := strconv.ParseFloat(fmt.Sprint(v[1]), 64)
	return f
}

// checkStatementsRose: Prometheus scraped the load step of bulkLoad while it ran and saw its
// statements counter rise (two samples of one series, the later one larger).
func (s *suite) checkStatementsRose(ctx context.Context, bulkLoad string, from time.Time) {
	s.t.Helper()
	var r struct {
		Result []promSeries `json:"result"`
	}
	s.promAPI(ctx, "/api/v1/query_range", url.Values{
		"query": {fmt.Sprintf(`rdf_bulkload_load_statements_total{bulkload=%q}`, bulkLoad)},
		"start": {strconv.FormatInt(from.Unix(), 10)}, "end": {strconv.FormatInt(time.Now().Unix(), 10)}, "step": {"1"}}, &r)
	best := 0.0
	for _, series := range r.Result {
		for i := 1; i < len(series.Values); i++ {
			if a, b := sampleValue(series.Values[i-1]), sampleValue(series.Values[i]); b > a && a >= 0 {
				best = max(best, b)
			}
		}
	}
	if best == 0 {
		s.t.Errorf("Prometheus never saw rdf_bulkload_load_statements_total of %s rise (series: %d)", bulkLoad, len(r.Result))
	} else {
		s.t.Logf("Prometheus saw the load's statements counter of %s rise to %.0f", bulkLoad, best)
	}
}

// checkBuildDurations: the operator's build duration histogram of bulkLoad has observations
// (waiting for the next scrapes: the operator pod may have just been replaced).
func (s *suite) checkBuildDurations(ctx context.Context, bulkLoad string) {
	s.t.Helper()
	q := fmt.Sprintf(`sum(max_over_time(rdf_bulkload_build_duration_seconds_count{bulkload=%q}[1h]))`, bulkLoad)
	var got float64
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Second) {
		var r struct {
			Result []promSeries `json:"result"`
		}
		s.promAPI(ctx, "/api/v1/query", url.Values{"query": {q}}, &r)
		if len(r.Result) > 0 {
			if got = sampleValue(r.Result[0].Value); got >= 1 {
				s.t.Logf("Prometheus has build durations of %s (%s = %.0f)", bulkLoad, q, got)
				return
			}
		}
	}
	s.t.Errorf("Prometheus has no build duration of %s (%s = %.0f)", bulkLoad, q, got)
}

// waitAlertFiring waits until Prometheus fires alert for bulkLoad.
func (s *suite) waitAlertFiring(ctx context.Context, alert, bulkLoad string) {
	s.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	var last []map[string]any
	for time.Now().Before(deadline) {
		var r struct {
			Alerts []map[string]any `json:"alerts"`
		}
		s.promAPI(ctx, "/api/v1/alerts", url.Values{}, &r)
		last = r.Alerts
		for _, a := range r.Alerts {
			labels, _ := a["labels"].(map[string]any)
			if labels["alertname"] == alert && labels["bulkload"] == bulkLoad && labels["namespace"] == s.ns && a["state"] == "firing" {
				ann, _ := a["annotations"].(map[string]any)
				s.t.Logf("Prometheus fires %s: %v", alert, ann["summary"])
				return
			}
		}
		time.Sleep(5 * time.Second)
	}
	s.t.Errorf("Prometheus does not fire %s for %s/%s; alerts: %v", alert, s.ns, bulkLoad, last)
}

// checkServedNames: every metric name the chart's rules and dashboard use has series in Prometheus,
// scraped from the operator and the build pods during this suite.
func (s *suite) checkServedNames(ctx context.Context, p *promSetup) {
	s.t.Helper()
	var have []string
	s.promAPI(ctx, "/api/v1/label/__name__/values", url.Values{}, &have)
	var missing []string
	for _, n := range p.names {
		if !slices.Contains(have, n) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		s.t.Errorf("metric names the chart's rules or dashboard use that Prometheus never scraped: %v", missing)
	} else {
		s.t.Logf("all %d metric names of the chart's rules and dashboard were scraped", len(p.names))
	}
}
