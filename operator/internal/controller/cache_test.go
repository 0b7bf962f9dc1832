package controller

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
)

// Objects without the operator's labels are not in its cache; its children and every
// BulkLoad are, without managedFields.
func TestCacheHoldsOnlyTheOperatorsChildren(t *testing.T) {
	c := startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := newBulkLoad(ns, "cached")
	bl.Spec.Serving = nil
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	_, wf := waitForWorkflow(t, client.ObjectKeyFromObject(bl))

	// The user's own objects of the same kinds, and one labelled managed-by only.
	claim := func(name string, labels map[string]string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: bl.Spec.Database.Size}},
			},
		}
	}
	g.Expect(k8s.Create(ctx, claim("user-data", nil))).To(Succeed())
	g.Expect(k8s.Create(ctx, claim("half-labelled", map[string]string{specs.LabelManagedBy: specs.ManagedBy}))).To(Succeed())
	userWf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "user-workflow"},
		Spec: wfv1.WorkflowSpec{Entrypoint: "main", Templates: []wfv1.Template{{Name: "main", Container: &corev1.Container{Image: "busybox"}}}}}
	g.Expect(k8s.Create(ctx, userWf)).To(Succeed())

	cache := c.reconciler.Client // reads go through the manager's cache
	time.Sleep(time.Second)      // let the informers see the new objects, if they would
	pvcs := &corev1.PersistentVolumeClaimList{}
	g.Expect(cache.List(ctx, pvcs, client.InNamespace(ns))).To(Succeed())
	var names []string
	for _, p := range pvcs.Items {
		names = append(names, p.Name)
		g.Expect(p.ManagedFields).To(BeEmpty())
	}
	g.Expect(names).To(ConsistOf(specs.DataClaimName(bl, wf.Annotations[specs.AnnotationRevision]), specs.ScratchClaimName(bl, wf.Annotations[specs.AnnotationRevision])))
	wfs := &wfv1.WorkflowList{}
	g.Expect(cache.List(ctx, wfs, client.InNamespace(ns))).To(Succeed())
	g.Expect(wfs.Items).To(HaveLen(1))
	g.Expect(wfs.Items[0].Name).To(Equal(wf.Name))
	err := cache.Get(ctx, client.ObjectKeyFromObject(userWf), &wfv1.Workflow{})
	g.Expect(err).To(HaveOccurred(), "an unlabelled workflow is not cached")
	// BulkLoads carry no labels and are all cached.
	g.Expect(cache.Get(ctx, client.ObjectKeyFromObject(bl), &rdfv1.BulkLoad{})).To(Succeed())

	// Deployments (possible serving workloads) are watched as metadata, of which the
	// cache keeps only their identity, not, say, a whole manifest in an annotation.
	dep := newServingDeployment(ns)
	dep.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("x", 4096)}
	dep.Labels = map[string]string{"app": "fuseki"}
	g.Expect(k8s.Create(ctx, dep)).To(Succeed())
	eventually(t, func(g Gomega) {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("DeploymentList"))
		g.Expect(cache.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		g.Expect(list.Items).To(HaveLen(1))
		g.Expect(list.Items[0].Name).To(Equal(dep.Name))
		g.Expect(list.Items[0].Annotations).To(BeEmpty())
		g.Expect(list.Items[0].Labels).To(BeEmpty())
		g.Expect(list.Items[0].ManagedFields).To(BeEmpty())
	})
}
