package controller

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
)

// The installable operator (kustomize build config/default) is accepted by the API
// server, and its generated RBAC is enough: a controller acting as the manager's
// ServiceAccount, with nothing but those roles, drives a build to Ready.
func TestInstalledRBACIsEnoughForABuild(t *testing.T) {
	kustomize := os.Getenv("KUSTOMIZE")
	if kustomize == "" {
		t.Fatal("KUSTOMIZE must name the kustomize binary; run `make test-operator`")
	}
	out, err := exec.Command(kustomize, "build", filepath.Join("..", "..", "..", "config", "default")).Output()
	if err != nil {
		t.Fatalf("kustomize build config/default: %v", err)
	}
	g := NewWithT(t)
	var serviceAccount *unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if len(obj.Object) == 0 || obj.GetKind() == "CustomResourceDefinition" {
			continue // the suite installed the CRD already
		}
		g.Expect(k8s.Create(ctx, obj)).To(Succeed(), "%s %s", obj.GetKind(), obj.GetName())
		if obj.GetKind() == "ServiceAccount" {
			serviceAccount = obj
		}
	}
	g.Expect(serviceAccount).NotTo(BeNil())
	dep := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: serviceAccount.GetNamespace(), Name: "rdf-bulkload-controller-manager"}, dep)).To(Succeed())
	g.Expect(dep.Spec.Template.Spec.ServiceAccountName).To(Equal(serviceAccount.GetName()))

	asManager := rest.CopyConfig(restConfig)
	asManager.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + serviceAccount.GetNamespace() + ":" + serviceAccount.GetName(),
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + serviceAccount.GetNamespace(), "system:authenticated"},
	}
	// The impersonated identity really is limited: it may not read Pods.
	limited, err := client.New(asManager, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(limited.List(ctx, &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "PodList"}})).NotTo(Succeed())

	startControllerWithConfig(t, asManager)
	ns := newNamespace(t)
	g.Expect(k8s.Create(ctx, newServingDeployment(ns))).To(Succeed())
	bl := newBulkLoad(ns, "least-privilege")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	bl = completeBuild(t, key)
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseReady))
		g.Expect(bl.Status.ServingClaim).NotTo(BeEmpty())
		g.Expect(eventReasons(g, bl)).To(HaveKey("HandedOff"))
	})
	g.Expect(k8s.Delete(ctx, bl)).To(Succeed())
	eventually(t, func(g Gomega) {
		g.Expect(k8s.Get(ctx, key, &rdfv1.BulkLoad{})).NotTo(Succeed(), "the finalizer is removed")
	})
}
