//go:build e2e

package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

var bulkLoadGVR = schema.GroupVersionResource{Group: "rdf.bulkload.io", Version: "v1alpha1", Resource: "bulkloads"}

const (
	release     = "rdf-bulkload"
	bucket      = "dumps"
	prefix      = "e2e/2026-11-20/"
	minioName   = "minio"
	secretName  = "rdf-dumps-credentials"
	fusekiName  = release + "-fuseki"
	workflowSA  = "rdf-bulkload-workflow"
	bulkLoadNme = "e2e"
)

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func randHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// splitImage splits registry/name:tag into repository and tag (a digest stays in the repository).
func splitImage(ref string) (string, string) {
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") && !strings.Contains(ref, "@") {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}

type suite struct {
	t       *testing.T
	cfg     *rest.Config
	kube    kubernetes.Interface
	dyn     dynamic.Interface
	ns      string
	user    string
	pass    string
	helm    string
	timeout time.Duration
}

func TestBulkLoadToFuseki(t *testing.T) {
	kubeconfig := os.Getenv("KUBECONFIG")
	if kubeconfig == "" {
		t.Skip("KUBECONFIG is not set: the cluster suite needs a cluster (see e2e/cluster/README.md)")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	timeout, err := time.ParseDuration(env("E2E_TIMEOUT", "30m"))
	if err != nil {
		t.Fatalf("E2E_TIMEOUT: %v", err)
	}
	s := &suite{t: t, cfg: cfg, kube: kubernetes.NewForConfigOrDie(cfg), dyn: dynamic.NewForConfigOrDie(cfg),
		ns: "rdf-bulkload-e2e-" + randHex(3), user: "e2e-" + randHex(4), pass: randHex(16),
		helm: env("HELM", "helm"), timeout: timeout}
	ctx, cancel := context.WithTimeout(context.Background(), timeout+15*time.Minute)
	defer cancel()

	s.createNamespace(ctx)
	defer s.cleanup()
	s.installChart(ctx)
	s.startMinIO(ctx)
	nt, nq := s.uploadDumps(ctx)
	s.applyBulkLoad(ctx)
	status := s.waitReady(ctx)
	s.queryFuseki(ctx, status, nt, nq)
}

func (s *suite) createNamespace(ctx context.Context) {
	_, err := s.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: s.ns, Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}}, metav1.CreateOptions{})
	if err != nil {
		s.t.Fatalf("create namespace: %v", err)
	}
	s.t.Logf("namespace %s", s.ns)
}

func (s *suite) cleanup() {
	if os.Getenv("E2E_KEEP") == "1" {
		s.t.Logf("E2E_KEEP=1: namespace %s kept", s.ns)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_ = s.dyn.Resource(bulkLoadGVR).Namespace(s.ns).Delete(ctx, bulkLoadNme, metav1.DeleteOptions{})
	out, err := exec.CommandContext(ctx, s.helm, "uninstall", release, "--namespace", s.ns, "--wait").CombinedOutput()
	if err != nil {
		s.t.Logf("helm uninstall: %v\n%s", err, out)
	}
	if err := s.kube.CoreV1().Namespaces().Delete(ctx, s.ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		s.t.Logf("delete namespace: %v", err)
	}
}

func (s *suite) installChart(ctx context.Context) {
	opRepo, opTag := splitImage(env("E2E_OPERATOR_IMAGE", "ghcr.io/rdf-bulkload/rdf-bulkload-operator:0.1.0"))
	ldRepo, ldTag := splitImage(env("E2E_LOADER_IMAGE", "ghcr.io/rdf-bulkload/rdf-bulkload-loader:0.1.0"))
	pull := env("E2E_IMAGE_PULL_POLICY", "IfNotPresent")
	args := []string{"install", release, filepath.Join(repoRoot(s.t), "charts", "rdf-bulkload"),
		"--namespace", s.ns, "--wait", "--timeout", "5m",
		"--set", "image.repository=" + opRepo, "--set", "image.tag=" + opTag, "--set", "image.pullPolicy=" + pull,
		"--set", "loaderImage.repository=" + ldRepo, "--set", "loaderImage.tag=" + ldTag,
		"--set", "fuseki.enabled=true", "--set", "fuseki.image.pullPolicy=" + pull,
		"--set", "fuseki.javaOptions=-Xmx512m", "--set", "fuseki.resources.requests.memory=768Mi",
		"--set", "fuseki.resources.limits.memory=1Gi",
		"--set", "argo.workflowServiceAccount.create=true", "--set", "argo.workflowServiceAccount.name=" + workflowSA,
		"--set", "replicaCount=1"}
	cmd := exec.CommandContext(ctx, s.helm, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("helm install: %v\n%s", err, out)
	}
	s.t.Logf("chart installed (operator %s:%s, loader %s:%s)", opRepo, opTag, ldRepo, ldTag)
}

func (s *suite) startMinIO(ctx context.Context) {
	labels := map[string]string{"app.kubernetes.io/name": minioName}
	_, err := s.kube.CoreV1().Secrets(s.ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "minio-root"},
		StringData: map[string]string{"MINIO_ROOT_USER": s.user, "MINIO_ROOT_PASSWORD": s.pass},
	}, metav1.CreateOptions{})
	if err != nil {
		s.t.Fatalf("minio secret: %v", err)
	}
	no, yes, uid := false, true, int64(65532)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: minioName, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes, RunAsUser: &uid, FSGroup: &uid,
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers: []corev1.Container{{
						Name: "minio", Image: env("E2E_MINIO_IMAGE", "quay.io/minio/minio:RELEASE.2025-09-07T16-13-09Z"),
						Args:    []string{"server", "/data", "--address", ":9000"},
						EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "minio-root"}}}},
						Env:     []corev1.EnvVar{{Name: "MINIO_BROWSER", Value: "off"}},
						Ports:   []corev1.ContainerPort{{Name: "s3", ContainerPort: 9000}},
						ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
							Path: "/minio/health/ready", Port: intstr.FromString("s3")}}},
						SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no, ReadOnlyRootFilesystem: &yes,
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
						VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "tmp", MountPath: "/tmp"}},
					}},
					Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
						{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
				},
			},
		},
	}
	if _, err := s.kube.AppsV1().Deployments(s.ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("minio deployment: %v", err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: minioName}, Spec: corev1.ServiceSpec{
		Selector: labels, Ports: []corev1.ServicePort{{Name: "s3", Port: 9000, TargetPort: intstr.FromString("s3")}}}}
	if _, err := s.kube.CoreV1().Services(s.ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("minio service: %v", err)
	}
	s.waitDeployment(ctx, minioName, 5*time.Minute)
}

func (s *suite) waitDeployment(ctx context.Context, name string, timeout time.Duration) {
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		d, err := s.kube.AppsV1().Deployments(s.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == *d.Spec.Replicas &&
			d.Status.ReadyReplicas == *d.Spec.Replicas && d.Status.Replicas == *d.Spec.Replicas, nil
	})
	if err != nil {
		s.t.Fatalf("deployment %s not ready: %v", name, err)
	}
}

// portForward forwards a local port to port of a ready pod matching selector; returns the
// local address and a stop function.
func (s *suite) portForward(ctx context.Context, selector string, port int) (string, func()) {
	pods, err := s.kube.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: selector, FieldSelector: "status.phase=Running"})
	if err != nil || len(pods.Items) == 0 {
		s.t.Fatalf("no running pod for %s: %v", selector, err)
	}
	pod := pods.Items[0].Name
	transport, upgrader, err := spdy.RoundTripperFor(s.cfg)
	if err != nil {
		s.t.Fatal(err)
	}
	u := s.kube.CoreV1().RESTClient().Post().Resource("pods").Namespace(s.ns).Name(pod).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.t.Fatal(err)
	}
	local := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	stop, ready := make(chan struct{}), make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("%d:%d", local, port)}, stop, ready, io.Discard, os.Stderr)
	if err != nil {
		s.t.Fatal(err)
	}
	go func() { _ = fw.ForwardPorts() }()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		s.t.Fatalf("port-forward to %s did not become ready", pod)
	}
	return "127.0.0.1:" + strconv.Itoa(local), func() { close(stop) }
}

func (s *suite) uploadDumps(ctx context.Context) (string, string) {
	root := repoRoot(s.t)
	nt := env("E2E_DATA_NT", filepath.Join(root, "examples", "catalog.ttl.gz"))
	nq := env("E2E_DATA_NQ", filepath.Join(root, "examples", "catalog-graphs.nq.gz"))
	addr, stop := s.portForward(ctx, "app.kubernetes.io/name="+minioName, 9000)
	defer stop()
	mc, err := minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4(s.user, s.pass, "")})
	if err != nil {
		s.t.Fatal(err)
	}
	if err := mc.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		s.t.Fatalf("make bucket: %v", err)
	}
	for _, f := range []string{nt, nq} {
		if _, err := mc.FPutObject(ctx, bucket, prefix+filepath.Base(f), f, minio.PutObjectOptions{}); err != nil {
			s.t.Fatalf("upload %s: %v", f, err)
		}
	}
	// the completion marker goes last: the operator never builds from a half-uploaded prefix
	if _, err := mc.PutObject(ctx, bucket, prefix+"_SUCCESS", bytes.NewReader(nil), 0, minio.PutObjectOptions{}); err != nil {
		s.t.Fatalf("upload marker: %v", err)
	}
	s.t.Logf("uploaded %s and %s to s3://%s/%s", filepath.Base(nt), filepath.Base(nq), bucket, prefix)
	return nt, nq
}

func (s *suite) applyBulkLoad(ctx context.Context) {
	_, err := s.kube.CoreV1().Secrets(s.ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName},
		StringData: map[string]string{"AWS_ACCESS_KEY_ID": s.user, "AWS_SECRET_ACCESS_KEY": s.pass},
	}, metav1.CreateOptions{})
	if err != nil {
		s.t.Fatalf("credentials secret: %v", err)
	}
	database := map[string]any{"size": "2Gi", "scratchSize": "2Gi"}
	if sc := os.Getenv("E2E_STORAGE_CLASS"); sc != "" {
		database["storageClassName"] = sc
	}
	snapshot := map[string]any{"keep": int64(2)}
	if vsc := os.Getenv("E2E_SNAPSHOT_CLASS"); vsc != "" {
		snapshot["volumeSnapshotClassName"] = vsc
	}
	bl := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rdf.bulkload.io/v1alpha1", "kind": "BulkLoad",
		"metadata": map[string]any{"name": bulkLoadNme},
		"spec": map[string]any{
			"source": map[string]any{
				"endpoint":             fmt.Sprintf("http://%s.%s.svc:9000", minioName, s.ns),
				"bucket":               bucket,
				"prefix":               prefix,
				"include":              []any{"*.gz"},
				"completion":           map[string]any{"marker": prefix + "_SUCCESS"},
				"credentialsSecretRef": map[string]any{"name": secretName},
			},
			"database":           database,
			"loader":             map[string]any{"memoryBudget": "512Mi", "onError": "strict"},
			"snapshot":           snapshot,
			"serving":            map[string]any{"name": fusekiName, "volumeName": "databases"},
			"serviceAccountName": workflowSA,
		},
	}}
	if _, err := s.dyn.Resource(bulkLoadGVR).Namespace(s.ns).Create(ctx, bl, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create BulkLoad: %v", err)
	}
}

func (s *suite) waitReady(ctx context.Context) map[string]any {
	var last map[string]any
	err := wait.PollUntilContextTimeout(ctx, 5*time.Second, s.timeout, true, func(ctx context.Context) (bool, error) {
		u, err := s.dyn.Resource(bulkLoadGVR).Namespace(s.ns).Get(ctx, bulkLoadNme, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		st, _, _ := unstructured.NestedMap(u.Object, "status")
		if phase, _ := st["phase"].(string); phase != fmt.Sprint(last["phase"]) {
			s.t.Logf("BulkLoad phase: %v", phase)
		}
		last = st
		switch st["phase"] {
		case "Ready":
			return true, nil
		case "Failed":
			return false, fmt.Errorf("BulkLoad failed")
		}
		return false, nil
	})
	if err != nil {
		b, _ := json.MarshalIndent(last, "", "  ")
		ev, _ := s.kube.CoreV1().Events(s.ns).List(context.Background(), metav1.ListOptions{})
		var evs []string
		if ev != nil {
			for _, e := range ev.Items {
				evs = append(evs, fmt.Sprintf("%s %s/%s: %s %s", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message))
			}
		}
		s.t.Fatalf("BulkLoad not Ready: %v\nstatus: %s\nevents:\n%s", err, b, strings.Join(evs, "\n"))
	}
	return last
}

func (s *suite) queryFuseki(ctx context.Context, status map[string]any, nt, nq string) {
	s.waitDeployment(ctx, fusekiName, 10*time.Minute)
	addr, stop := s.portForward(ctx, "app.kubernetes.io/component=fuseki,app.kubernetes.io/instance="+release, 3030)
	defer stop()
	load, _ := status["load"].(map[string]any)
	wantTriples, _ := load["triples"].(int64)
	wantQuads, _ := load["quads"].(int64)
	if wantTriples+wantQuads == 0 {
		s.t.Fatalf("status.load reports no statements: %v", load)
	}
	triples := s.count(addr, "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }")
	quads := s.count(addr, "SELECT (COUNT(*) AS ?n) { GRAPH ?g { ?s ?p ?o } }")
	if triples != wantTriples || quads != wantQuads {
		s.t.Fatalf("Fuseki serves %d triples and %d quads, the BulkLoad loaded %d and %d", triples, quads, wantTriples, wantQuads)
	}
	if ask := s.sparql(addr, "ASK { GRAPH ?g { ?s ?p ?o } }"); !strings.Contains(ask, `"boolean" : true`) && !strings.Contains(ask, `"boolean":true`) {
		s.t.Fatalf("ASK answered %s", ask)
	}
	s.t.Logf("Fuseki serves the handed-off database: %d triples, %d quads (from %s, %s)", triples, quads,
		filepath.Base(nt), filepath.Base(nq))
}

func (s *suite) sparql(addr, q string) string {
	resp, err := http.PostForm("http://"+addr+"/ds/sparql", url.Values{"query": {q}})
	if err != nil {
		s.t.Fatalf("SPARQL over the port-forward: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		s.t.Fatalf("Fuseki HTTP %d: %s", resp.StatusCode, body)
	}
	return string(body)
}

func (s *suite) count(addr, q string) int64 {
	var r struct {
		Results struct {
			Bindings []map[string]struct {
				Value string `json:"value"`
			} `json:"bindings"`
		} `json:"results"`
	}
	body := s.sparql(addr, q)
	if err := json.Unmarshal([]byte(body), &r); err != nil || len(r.Results.Bindings) != 1 {
		s.t.Fatalf("unexpected answer to %s: %s", q, body)
	}
	n, err := strconv.ParseInt(r.Results.Bindings[0]["n"].Value, 10, 64)
	if err != nil {
		s.t.Fatal(err)
	}
	return n
}
