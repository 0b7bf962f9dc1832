package specs

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// AnnotationServedRevision on the serving pod template records which source
// revision it serves; changing the template makes the workload roll.
const AnnotationServedRevision = "rdf.bulkload.io/served-revision"

// FieldManager is the operator's server-side-apply field manager. It owns exactly the
// handoff's fields of the serving workload (the volume entry it switches and the
// served-revision annotation); GitOps tools are told to ignore what it manages.
const FieldManager = "rdf-bulkload-operator"

// Handoff is the part of the serving workload the operator owns: its pod template's
// volume Volume mounts Claim, restored from the snapshot of Revision, and the template is
// annotated with the revision it serves.
type Handoff struct {
	Volume   string
	Claim    string
	Revision string
}

// PodTemplate returns a copy of a workload's pod template that holds the handoff. The
// volume's previous source (emptyDir, an older claim...) is replaced, not merged.
// Server-side apply cannot remove a source another manager owns (a Volume is a union the
// apply merge does not clear: applying a persistentVolumeClaim next to a chart's emptyDir
// is refused as two sources), so the caller patches with this template first and then
// applies Apply's configuration.
func (h Handoff) PodTemplate(tmpl *corev1.PodTemplateSpec) (*corev1.PodTemplateSpec, error) {
	out := tmpl.DeepCopy()
	for i := range out.Spec.Volumes {
		v := &out.Spec.Volumes[i]
		if v.Name != h.Volume {
			continue
		}
		readOnly := false
		if v.PersistentVolumeClaim != nil {
			readOnly = v.PersistentVolumeClaim.ReadOnly
		}
		v.VolumeSource = corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
			ClaimName: h.Claim, ReadOnly: readOnly,
		}}
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[AnnotationServedRevision] = ShortRevision(h.Revision)
		return out, nil
	}
	return nil, fmt.Errorf("the serving workload has no volume %q in spec.template.spec.volumes to hand the database to", h.Volume)
}

// Apply is the server-side apply configuration of the handoff to workload (a Deployment
// or a StatefulSet): only the volume entry (volumes merge by their name key, so the
// workload's other volumes stay with their owners) and the served-revision annotation.
// The volume keeps the read-only flag the workload's template gives it.
func (h Handoff) Apply(workload runtime.Object) (runtime.ApplyConfiguration, error) {
	var meta metav1.ObjectMeta
	var tmpl *corev1.PodTemplateSpec
	switch w := workload.(type) {
	case *appsv1.Deployment:
		meta, tmpl = w.ObjectMeta, &w.Spec.Template
	case *appsv1.StatefulSet:
		meta, tmpl = w.ObjectMeta, &w.Spec.Template
	default:
		return nil, fmt.Errorf("cannot hand a database to a %T", workload)
	}
	pvc := corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(h.Claim)
	for _, v := range tmpl.Spec.Volumes {
		if v.Name == h.Volume && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ReadOnly {
			pvc.WithReadOnly(true)
		}
	}
	tmplAC := corev1ac.PodTemplateSpec().
		WithAnnotations(map[string]string{AnnotationServedRevision: ShortRevision(h.Revision)}).
		WithSpec(corev1ac.PodSpec().WithVolumes(corev1ac.Volume().WithName(h.Volume).WithPersistentVolumeClaim(pvc)))
	if _, ok := workload.(*appsv1.StatefulSet); ok {
		return appsv1ac.StatefulSet(meta.Name, meta.Namespace).WithSpec(appsv1ac.StatefulSetSpec().WithTemplate(tmplAC)), nil
	}
	return appsv1ac.Deployment(meta.Name, meta.Namespace).WithSpec(appsv1ac.DeploymentSpec().WithTemplate(tmplAC)), nil
}

// Holds says whether the template mounts the claim, and nothing else, as the volume and
// is annotated with the revision: what the handoff set and a drift undoes.
func (h Handoff) Holds(tmpl *corev1.PodTemplateSpec) bool {
	if tmpl.Annotations[AnnotationServedRevision] != ShortRevision(h.Revision) {
		return false
	}
	for _, v := range tmpl.Spec.Volumes {
		if v.Name != h.Volume {
			continue
		}
		if v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != h.Claim {
			return false
		}
		others := v.VolumeSource
		others.PersistentVolumeClaim = nil
		return equality.Semantic.DeepEqual(others, corev1.VolumeSource{})
	}
	return false
}

// DescribeVolume says in a few words what the template's volume volumeName is, for
// messages about a drifted handoff.
func DescribeVolume(tmpl *corev1.PodTemplateSpec, volumeName string) string {
	for _, v := range tmpl.Spec.Volumes {
		if v.Name != volumeName {
			continue
		}
		switch {
		case v.PersistentVolumeClaim != nil && v.EmptyDir == nil:
			return "claim " + v.PersistentVolumeClaim.ClaimName
		case v.EmptyDir != nil && v.PersistentVolumeClaim == nil:
			return "an emptyDir"
		default:
			return "another volume source"
		}
	}
	return "no volume " + volumeName
}

// VolumeManagers are the field managers (other than the operator) that own a field of
// the template's volume volumeName: who changed a handed-off volume back.
func VolumeManagers(managed []metav1.ManagedFieldsEntry, volumeName string) []string {
	key := fmt.Sprintf(`"k:{\"name\":\"%s\"}"`, volumeName)
	var out []string
	for _, m := range managed {
		if m.Manager == FieldManager || m.FieldsV1 == nil {
			continue
		}
		if strings.Contains(m.FieldsV1.GetRawString(), key) {
			out = append(out, m.Manager)
		}
	}
	return out
}

// OwnsHandoff says whether the operator's field manager holds the handoff's volume
// by server-side apply (so a later apply by another manager conflicts instead of
// silently taking it, and GitOps tools can ignore it by manager).
func OwnsHandoff(managed []metav1.ManagedFieldsEntry, volumeName string) bool {
	key := fmt.Sprintf(`"k:{\"name\":\"%s\"}"`, volumeName)
	for _, m := range managed {
		if m.Manager == FieldManager && m.Operation == metav1.ManagedFieldsOperationApply && m.FieldsV1 != nil &&
			strings.Contains(m.FieldsV1.GetRawString(), key) && strings.Contains(m.FieldsV1.GetRawString(), `"f:claimName"`) {
			return true
		}
	}
	return false
}

// ServedClaim is the claim the template's volume volumeName mounts, "" if none.
func ServedClaim(tmpl *corev1.PodTemplateSpec, volumeName string) string {
	for _, v := range tmpl.Spec.Volumes {
		if v.Name == volumeName && v.PersistentVolumeClaim != nil {
			return v.PersistentVolumeClaim.ClaimName
		}
	}
	return ""
}

// Rollout says whether a Deployment or StatefulSet has finished rolling out its current
// template: the controller observed it, every replica runs it, no old pod is left and
// all are available. pending explains what it waits for ("" when done).
func Rollout(obj runtime.Object) (pending string) {
	switch w := obj.(type) {
	case *appsv1.Deployment:
		want := replicas(w.Spec.Replicas)
		st := w.Status
		var msg string
		switch {
		case st.ObservedGeneration < w.Generation:
			msg = fmt.Sprintf("waiting for the Deployment controller to observe generation %d", w.Generation)
		case st.UpdatedReplicas < want:
			msg = fmt.Sprintf("%d of %d pods run the new template", st.UpdatedReplicas, want)
		case st.Replicas > st.UpdatedReplicas:
			msg = fmt.Sprintf("%d old pods are still running", st.Replicas-st.UpdatedReplicas)
		case st.AvailableReplicas < want:
			msg = fmt.Sprintf("%d of %d new pods are available", st.AvailableReplicas, want)
		default:
			return ""
		}
		for _, c := range st.Conditions {
			if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse {
				msg += fmt.Sprintf(" (%s: %s)", c.Reason, c.Message)
			}
		}
		return msg
	case *appsv1.StatefulSet:
		want := replicas(w.Spec.Replicas)
		st := w.Status
		switch {
		case st.ObservedGeneration < w.Generation:
			return fmt.Sprintf("waiting for the StatefulSet controller to observe generation %d", w.Generation)
		case st.UpdatedReplicas < want:
			msg := fmt.Sprintf("%d of %d pods run the new template", st.UpdatedReplicas, want)
			if w.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
				msg += " (updateStrategy OnDelete: delete the old pods)"
			}
			return msg
		case st.CurrentRevision != "" && st.CurrentRevision != st.UpdateRevision:
			return fmt.Sprintf("revision %s is still being replaced by %s", st.CurrentRevision, st.UpdateRevision)
		case st.AvailableReplicas < want:
			return fmt.Sprintf("%d of %d new pods are available", st.AvailableReplicas, want)
		}
		return ""
	}
	return fmt.Sprintf("cannot tell the rollout of a %T", obj)
}

// WorkloadSelector is a Deployment's or StatefulSet's pod selector (nil for other kinds).
func WorkloadSelector(obj runtime.Object) *metav1.LabelSelector {
	switch w := obj.(type) {
	case *appsv1.Deployment:
		return w.Spec.Selector
	case *appsv1.StatefulSet:
		return w.Spec.Selector
	}
	return nil
}

// UnschedulableReason is the scheduler's account of why a pod waits to be placed
// (its PodScheduled condition with reason Unschedulable), "" when it does not wait.
func UnschedulableReason(pod *corev1.Pod) string {
	if pod.Spec.NodeName != "" || pod.Status.Phase != corev1.PodPending {
		return ""
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return c.Message
		}
	}
	return ""
}

// Replicas is a workload's spec.replicas (nil means 1, the API's default).
func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

// WorkloadReplicas is the replicas of a Deployment or StatefulSet.
func WorkloadReplicas(obj runtime.Object) int32 {
	switch w := obj.(type) {
	case *appsv1.Deployment:
		return replicas(w.Spec.Replicas)
	case *appsv1.StatefulSet:
		return replicas(w.Spec.Replicas)
	}
	return 1
}
