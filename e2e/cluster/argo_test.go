//go:build e2e

package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Argo as other people run it (issue 31): a workflow-controller that is down, one that only
// runs Workflows labelled with its instanceID, one whose default artifact repository archives
// logs. Each changes the cluster's one Argo controller, so this test runs alone and puts it
// back as it was.
const (
	argoNamespace  = "argo"
	argoController = "workflow-controller"
	argoConfigMap  = "workflow-controller-configmap"
	argoInstanceID = "rdf-bulkload-e2e"
	// Argo's quick-start artifact repository: logs archived, credentials in a Secret of Argo's
	// namespace (which the BulkLoads' namespaces lack)
	quickStartArtifactRepository = `archiveLogs: true
s3:
  bucket: my-bucket
  endpoint: minio.argo:9000
  insecure: true
  accessKeySecret: {name: my-minio-cred, key: accesskey}
  secretKeySecret: {name: my-minio-cred, key: secretkey}
`
	// the operator's --workflow-start-timeout here (chart argo.workflowStartTimeout)
	workflowStartTimeout = 20 * time.Second
)

func TestArgoInstallations(t *testing.T) {
	s, ctx := newSuite(t)
	s.helmUpgrade(ctx, "argo.workflowStartTimeout="+workflowStartTimeout.String())
	dir := t.TempDir()
	t.Run("controller-down", func(t *testing.T) { s.with(t).argoControllerDown(ctx, dir) })
	t.Run("instance-id", func(t *testing.T) { s.with(t).argoInstanceID(ctx, dir) })
	t.Run("archive-logs", func(t *testing.T) { s.with(t).argoArchiveLogs(ctx, dir) })
}

// argoControllerDown: with no workflow-controller running, a build's Workflow gets no status;
// the BulkLoad says so (Reconciling/WorkflowNotStarted, an event) once the start timeout has
// passed, and the same Workflow runs once a controller is back.
func (s *suite) argoControllerDown(ctx context.Context, dir string) {
	t := s.t
	const name = "argo-down"
	s.scaleArgoController(ctx, 0)
	t.Cleanup(func() { s.scaleArgoController(context.Background(), 1) })
	bl := s.argoBulkLoad(ctx, name, dir)
	created := time.Now()
	s.createBulkLoad(ctx, bl)
	u := s.waitBulkLoad(ctx, name, "Reconciling/WorkflowNotStarted", workflowStartTimeout+time.Minute, func(u *unstructured.Unstructured) bool {
		st, reason := condition(u, "Reconciling")
		return st == "True" && reason == "WorkflowNotStarted"
	})
	msg := conditionMessage(u, "Reconciling")
	t.Logf("Reconciling/WorkflowNotStarted %.0f s after the BulkLoad was created: %s", time.Since(created).Seconds(), msg)
	for _, cause := range []string{"--managed-namespace", "instanceID", "controller"} {
		if !strings.Contains(msg, cause) {
			t.Errorf("the message does not name %q among the causes: %q", cause, msg)
		}
	}
	if st, reason := condition(u, "Stalled"); st == "True" {
		t.Errorf("a Workflow no controller picked up yet is final (Stalled/%s); it must wait", reason)
	}
	s.expectEvent(ctx, name, "WorkflowNotStarted")

	s.scaleArgoController(ctx, 1)
	restarted := time.Now()
	s.waitPickedUp(ctx, name)
	t.Logf("the build runs %.0f s after the controller came back", time.Since(restarted).Seconds())
	if n := len(s.workflowsOf(ctx, name)); n != 1 {
		t.Errorf("%d workflows for the build, want the one the controller picked up late", n)
	}
}

// waitPickedUp waits until a workflow-controller runs the BulkLoad's Workflow and the BulkLoad
// says so: Argo's phase in status.workflow, Reconciling no longer WorkflowNotStarted. (The rest
// of a build is the other tests' business.)
func (s *suite) waitPickedUp(ctx context.Context, name string) {
	s.waitBulkLoad(ctx, name, "its Workflow run by a controller", 2*time.Minute, func(u *unstructured.Unstructured) bool {
		_, reason := condition(u, "Reconciling")
		return statusString(u, "workflow", "phase") != "" && reason != "WorkflowNotStarted"
	})
}

// argoInstanceID: a controller configured with an instanceID runs only the Workflows labelled
// with it; with the same --argo-instance-id (chart argo.instanceID) the operator's builds run.
func (s *suite) argoInstanceID(ctx context.Context, dir string) {
	t := s.t
	const name = "argo-instance"
	s.setArgoInstanceID(ctx, argoInstanceID)
	t.Cleanup(func() { s.setArgoInstanceID(context.Background(), "") })
	s.helmUpgrade(ctx, "argo.instanceID="+argoInstanceID)
	t.Cleanup(func() { s.helmUpgrade(context.Background(), "argo.instanceID=") })
	bl := s.argoBulkLoad(ctx, name, dir)
	s.createBulkLoad(ctx, bl)
	s.waitPickedUp(ctx, name)
	for _, wf := range s.workflowsOf(ctx, name) {
		if got := wf.GetLabels()["workflows.argoproj.io/controller-instanceid"]; got != argoInstanceID {
			t.Errorf("workflow %s has instance ID label %q, want %q", wf.GetName(), got, argoInstanceID)
		}
	}
}

// argoArchiveLogs: a workflow-controller whose default artifact repository archives logs with
// credentials in Argo's namespace (as Argo's quick-start sets it up) makes every step pod mount
// that Secret from the BulkLoad's namespace, where it is not: the pod never starts. With the
// chart's argo.artifactRepository the Workflows name a repository of their own, and the build
// runs to the end.
func (s *suite) argoArchiveLogs(ctx context.Context, dir string) {
	t := s.t
	s.setArgoConfig(ctx, "artifactRepository", quickStartArtifactRepository)
	t.Cleanup(func() { s.setArgoConfig(context.Background(), "artifactRepository", "") })

	const stuck = "argo-archive-default"
	s.createBulkLoad(ctx, s.argoBulkLoad(ctx, stuck, dir))
	s.waitStepPodMountFails(ctx, stuck, "my-minio-cred")
	s.deleteBulkLoad(ctx, stuck)

	s.helmUpgrade(ctx, "argo.artifactRepository.enabled=true")
	t.Cleanup(func() { s.helmUpgrade(context.Background(), "argo.artifactRepository.enabled=false") })
	const name = "argo-archive-own"
	s.createBulkLoad(ctx, s.argoBulkLoad(ctx, name, dir))
	s.waitBulkLoad(ctx, name, "Ready", 10*time.Minute, func(u *unstructured.Unstructured) bool {
		if phase := statusString(u, "phase"); phase == "Failed" {
			t.Fatalf("the build failed: %s", conditionMessage(u, "Stalled"))
		}
		st, _ := condition(u, "Ready")
		return st == "True"
	})
	for _, wf := range s.workflowsOf(ctx, name) {
		ref, _, _ := unstructured.NestedStringMap(wf.Object, "spec", "artifactRepositoryRef")
		if ref["configMap"] != "rdf-bulkload-artifact-repository" || ref["key"] != "repository" {
			t.Errorf("workflow %s: artifactRepositoryRef %v, want the chart's ConfigMap", wf.GetName(), ref)
		}
	}
}

// waitStepPodMountFails waits until a step pod of the BulkLoad's Workflow cannot start because
// the Secret is missing from the namespace (the kubelet's FailedMount event).
func (s *suite) waitStepPodMountFails(ctx context.Context, bulkLoad, secret string) {
	var seen string
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 4*time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, wf := range s.workflowsOf(ctx, bulkLoad) {
			pods, err := s.kube.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: "workflows.argoproj.io/workflow=" + wf.GetName()})
			if err != nil {
				return false, nil
			}
			for _, pod := range pods.Items {
				if pod.Status.Phase != "Pending" {
					return false, fmt.Errorf("step pod %s is %s: Argo's repository did not keep it from starting", pod.Name, pod.Status.Phase)
				}
				ev, err := s.kube.CoreV1().Events(s.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod.Name + ",reason=FailedMount"})
				if err != nil {
					return false, nil
				}
				for _, e := range ev.Items {
					if strings.Contains(e.Message, secret) {
						seen = pod.Name + ": " + e.Message
						return true, nil
					}
				}
			}
		}
		return false, nil
	})
	if err != nil {
		s.t.Fatalf("no step pod of %s failed to mount Secret %s: %v", bulkLoad, secret, err)
	}
	s.t.Logf("without the Workflows' own artifact repository: %s", seen)
}

// argoBulkLoad is a small build that serves nothing: what these scenarios check ends once it runs.
func (s *suite) argoBulkLoad(ctx context.Context, name, dir string) *unstructured.Unstructured {
	bl, _ := s.dumpBulkLoad(ctx, name, "argo/"+name+"/", dir, 1000)
	setField(s.t, bl, "Delete", "spec", "snapshot", "onDelete")
	unstructured.RemoveNestedField(bl.Object, "spec", "serving")
	return bl
}

func (s *suite) expectEvent(ctx context.Context, object, reason string) {
	ev, err := s.kube.CoreV1().Events(s.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + object + ",reason=" + reason})
	if err != nil {
		s.t.Fatal(err)
	}
	if len(ev.Items) == 0 {
		s.t.Errorf("no %s event for %s", reason, object)
	}
}

func (s *suite) workflowsOf(ctx context.Context, bulkLoad string) []unstructured.Unstructured {
	l, err := s.dyn.Resource(workflowGVR).Namespace(s.ns).List(ctx, metav1.ListOptions{LabelSelector: "rdf.bulkload.io/bulkload=" + bulkLoad})
	if err != nil {
		s.t.Fatal(err)
	}
	return l.Items
}

// scaleArgoController sets the workflow-controller's replicas and waits until that many pods
// run it (none left for 0).
func (s *suite) scaleArgoController(ctx context.Context, replicas int32) {
	t := s.t
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"replicas": replicas}})
	deployments := s.kube.AppsV1().Deployments(argoNamespace)
	if _, err := deployments.Patch(ctx, argoController, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("scale the Argo workflow-controller to %d: %v", replicas, err)
	}
	s.waitArgoController(ctx, replicas)
	t.Logf("Argo's workflow-controller scaled to %d", replicas)
}

// waitArgoController waits until the controller's rollout is done with want pods, and no other:
// a terminating controller pod still runs Workflows until it exits.
func (s *suite) waitArgoController(ctx context.Context, want int32) {
	var d *appsv1.Deployment
	pods := -1
	err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		if d, err = s.kube.AppsV1().Deployments(argoNamespace).Get(ctx, argoController, metav1.GetOptions{}); err != nil {
			return false, nil
		}
		st := d.Status
		if st.ObservedGeneration < d.Generation || st.Replicas != want || st.UpdatedReplicas != want || st.AvailableReplicas != want {
			return false, nil
		}
		l, err := s.kube.CoreV1().Pods(argoNamespace).List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(d.Spec.Selector)})
		if err != nil {
			return false, nil
		}
		pods = len(l.Items)
		return pods == int(want), nil
	})
	if err != nil {
		s.t.Fatalf("Argo's workflow-controller did not settle at %d pods: %v (%d pods; status %+v)", want, err, pods, d.Status)
	}
}

// setArgoInstanceID sets (or, with "", removes) the controller's instanceID.
func (s *suite) setArgoInstanceID(ctx context.Context, id string) {
	s.setArgoConfig(ctx, "instanceID", id)
}

// setArgoConfig sets (or, with "", removes) a key of the controller's ConfigMap and restarts
// it, as an administrator would.
func (s *suite) setArgoConfig(ctx context.Context, key, value string) {
	t := s.t
	cms := s.kube.CoreV1().ConfigMaps(argoNamespace)
	cm, err := cms.Get(ctx, argoConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Argo's ConfigMap: %v", err)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	if value == "" {
		delete(cm.Data, key)
	} else {
		cm.Data[key] = value
	}
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("Argo's ConfigMap: %v", err)
	}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{
		"annotations": map[string]any{"rdf-bulkload.e2e/restarted-at": time.Now().Format(time.RFC3339Nano)}}}}})
	if _, err := s.kube.AppsV1().Deployments(argoNamespace).Patch(ctx, argoController, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("restart Argo's workflow-controller: %v", err)
	}
	s.waitArgoController(ctx, 1)
	t.Logf("Argo's workflow-controller runs with %s %q", key, value)
}
