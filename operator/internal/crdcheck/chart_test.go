package crdcheck

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// The chart installs the CRD with the release and upgrades it with the release, which Helm
// never does for a chart's crds/; a second release beside it leaves the CRD to the first; the
// CRD outlives `helm uninstall` (its BulkLoads would go with it). Real helm against a real
// kube-apiserver: a release installed from a chart whose CRD lacks a field is found out by
// Missing, and `helm upgrade` to the current chart fixes it.
func TestTheChartInstallsUpgradesAndKeepsTheCRD(t *testing.T) {
	helmBin := os.Getenv("HELM")
	if helmBin == "" || os.Getenv("KUBEBUILDER_ASSETS") == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("HELM and KUBEBUILDER_ASSETS must be set (make test-operator sets them)")
		}
		t.Skip("HELM or KUBEBUILDER_ASSETS unset: run through make test-operator")
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	admin, err := env.AddUser(envtest.User{Name: "chart-admin", Groups: []string{"system:masters"}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	kubeconfigPath := filepath.Join(work, "kubeconfig")
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_ = apiextensionsv1.AddToScheme(c.Scheme())
	helm := func(args ...string) {
		t.Helper()
		cmd := exec.Command(helmBin, append(args, "--kubeconfig", kubeconfigPath)...)
		cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(work, "helm-cache"),
			"HELM_CONFIG_HOME="+filepath.Join(work, "helm-config"), "HELM_DATA_HOME="+filepath.Join(work, "helm-data"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("helm %v: %v\n%s", args, err, out)
		}
	}
	missing := func() []string {
		t.Helper()
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(context.Background(), types.NamespacedName{Name: CRDName}, crd); err != nil {
			t.Fatalf("the BulkLoad CRD: %v", err)
		}
		m, err := Missing(crd)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}

	chart := filepath.Join("..", "..", "..", "charts", "rdf-bulkload")
	older := filepath.Join(work, "rdf-bulkload")
	if err := os.CopyFS(older, os.DirFS(chart)); err != nil {
		t.Fatal(err)
	}
	crdFile := filepath.Join(older, "files", "crd-bulkloads.yaml")
	data, err := os.ReadFile(crdFile)
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(err)
	}
	serving := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["serving"]
	delete(serving.Properties, "snapshotName")
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["serving"] = serving
	if data, err = yaml.Marshal(crd); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(crdFile, data, 0o644); err != nil {
		t.Fatal(err)
	}

	helm("install", "first", older, "--namespace", "first", "--create-namespace")
	if m := missing(); !slices.Contains(m, "spec.serving.snapshotName") {
		t.Fatalf("installed from the older chart, the CRD should lack spec.serving.snapshotName; missing: %v", m)
	}
	helm("upgrade", "first", chart, "--namespace", "first")
	if m := missing(); len(m) != 0 {
		t.Fatalf("helm upgrade left the CRD without %v", m)
	}
	helm("install", "second", chart, "--namespace", "second", "--create-namespace", "--set", "crds.install=false")
	helm("uninstall", "first", "--namespace", "first")
	if m := missing(); len(m) != 0 {
		t.Fatalf("after helm uninstall the CRD lacks %v", m)
	}
}
