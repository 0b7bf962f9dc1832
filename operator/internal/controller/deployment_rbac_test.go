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
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
)

// The installable operator (kustomize build config/default) is accepted by the API
// server, and its generated RBAC is enough: a controller acting as the manager's
// ServiceAccount, with nothing but those roles, drives a build to Ready.
func TestInstalledRBACIsEnoughForABuild(t *testing.T) {
	g := NewWithT(t)
	var serviceAccount *unstructured.Unstructured
	for _, obj := range installConfigDefault(t) {
		if obj.GetKind() == "ServiceAccount" && obj.GetName() == "rdf-bulkload-controller-manager" {
			serviceAccount = obj
		}
	}
	g.Expect(serviceAccount).NotTo(BeNil())
	dep := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: serviceAccount.GetNamespace(), Name: "rdf-bulkload-controller-manager"}, dep)).To(Succeed())
	g.Expect(dep.Spec.Template.Spec.ServiceAccountName).To(Equal(serviceAccount.GetName()))

	asManager := impersonating(serviceAccount.GetNamespace(), serviceAccount.GetName())
	// The impersonated identity really is limited: it may not list Secrets (it reads the
	// watch trigger's one at a time) nor watch Pods.
	limited, err := client.NewWithWatch(asManager, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	err = limited.List(ctx, &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "SecretList"}})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "listing Secrets: %v", err)
	_, err = limited.Watch(ctx, &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "PodList"}})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "watching Pods: %v", err)

	startControllerWithConfig(t, asManager)
	ns := newNamespace(t)
	g.Expect(k8s.Create(ctx, newServingDeployment(ns))).To(Succeed())
	rolloutControllerStandIn{t: t}.completeEvery(ns)
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

// impersonating is the suite's API access as the given ServiceAccount, with only its RBAC.
func impersonating(namespace, name string) *rest.Config {
	cfg := rest.CopyConfig(restConfig)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + namespace + ":" + name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
	return cfg
}

// renderConfigDefault is `kustomize build config/default`, the install of the README.
func renderConfigDefault(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	kustomize := os.Getenv("KUSTOMIZE")
	if kustomize == "" {
		t.Fatal("KUSTOMIZE must name the kustomize binary; run `make test-operator`")
	}
	out, err := exec.Command(kustomize, "build", filepath.Join("..", "..", "..", "config", "default")).Output()
	if err != nil {
		t.Fatalf("kustomize build config/default: %v", err)
	}
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
	return objs
}

// installConfigDefault creates what config/default renders (but the CRD, which the
// suite installed); objects an earlier test created stay as they are.
func installConfigDefault(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	objs := renderConfigDefault(t)
	for _, obj := range objs {
		if obj.GetKind() == "CustomResourceDefinition" {
			continue
		}
		if err := k8s.Create(ctx, obj.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	return objs
}

func findRendered(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// `kubectl apply -k config/default` creates the build pods' ServiceAccount that the
// samples name, with exactly Argo's executor permissions (create/patch
// workflowtaskresults) in the operator's namespace; the API server's RBAC grants them
// and nothing more.
func TestConfigDefaultInstallsTheWorkflowServiceAccount(t *testing.T) {
	g := NewWithT(t)
	objs := installConfigDefault(t)
	const name, ns = "rdf-bulkload-workflow", "rdf-bulkload-system"
	sa := findRendered(objs, "ServiceAccount", name)
	g.Expect(sa).NotTo(BeNil(), "config/default renders no ServiceAccount %s", name)
	g.Expect(sa.GetNamespace()).To(Equal(ns))
	role := &rbacv1.Role{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, role)).To(Succeed())
	g.Expect(role.Rules).To(Equal([]rbacv1.PolicyRule{{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflowtaskresults"}, Verbs: []string{"create", "patch"}}}))
	rb := &rbacv1.RoleBinding{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rb)).To(Succeed())
	g.Expect(rb.RoleRef).To(Equal(rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name}))
	g.Expect(rb.Subjects).To(Equal([]rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}}))

	can := func(namespace, group, resource, verb string) bool {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   "system:serviceaccount:" + ns + ":" + name,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: namespace, Group: group, Resource: resource, Verb: verb,
			},
		}}
		g.Expect(k8s.Create(ctx, sar)).To(Succeed())
		return sar.Status.Allowed
	}
	g.Expect(can(ns, "argoproj.io", "workflowtaskresults", "create")).To(BeTrue())
	g.Expect(can(ns, "argoproj.io", "workflowtaskresults", "patch")).To(BeTrue())
	g.Expect(can(ns, "", "secrets", "get")).To(BeFalse())
	g.Expect(can(ns, "", "pods", "patch")).To(BeFalse())
	g.Expect(can(ns, "argoproj.io", "workflows", "create")).To(BeFalse())
	g.Expect(can("default", "argoproj.io", "workflowtaskresults", "create")).To(BeFalse(), "only in the operator's namespace")

	// The samples' build pods run as it.
	for _, sample := range []string{"rdf_v1alpha1_bulkload.yaml", "rdf_v1alpha1_bulkload_minio.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "samples", sample))
		g.Expect(err).NotTo(HaveOccurred())
		bl := &rdfv1.BulkLoad{}
		g.Expect(yaml.UnmarshalStrict(data, bl)).To(Succeed(), sample)
		g.Expect(bl.Spec.ServiceAccountName).To(Equal(name), sample)
	}
}

// The manager's pod, as config/default installs it into its namespace (labelled
// pod-security.kubernetes.io/enforce=restricted), passes the restricted Pod Security
// Standard by the admission's own checks, with a read-only root filesystem.
func TestConfigDefaultManagerPassesRestrictedPodSecurity(t *testing.T) {
	g := NewWithT(t)
	objs := renderConfigDefault(t)
	nsObj := findRendered(objs, "Namespace", "rdf-bulkload-system")
	g.Expect(nsObj).NotTo(BeNil())
	g.Expect(nsObj.GetLabels()).To(HaveKeyWithValue("pod-security.kubernetes.io/enforce", "restricted"))
	u := findRendered(objs, "Deployment", "rdf-bulkload-controller-manager")
	g.Expect(u).NotTo(BeNil())
	dep := &appsv1.Deployment{}
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, dep)).To(Succeed())
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	g.Expect(err).NotTo(HaveOccurred())
	lv := psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}
	verdict := policy.AggregateCheckResults(evaluator.EvaluatePod(lv, &dep.Spec.Template.ObjectMeta, &dep.Spec.Template.Spec))
	g.Expect(verdict.Allowed).To(BeTrue(), "%s: %s", verdict.ForbiddenReason(), verdict.ForbiddenDetail())
	for _, c := range dep.Spec.Template.Spec.Containers {
		g.Expect(c.SecurityContext.ReadOnlyRootFilesystem).To(HaveValue(BeTrue()), c.Name)
	}
}
