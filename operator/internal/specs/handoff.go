package specs

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// AnnotationServedRevision on the serving pod template records which source
// revision it serves; changing the template makes the workload roll.
const AnnotationServedRevision = "rdf.bulkload.io/served-revision"

// HandoffPodTemplate returns a copy of a workload's pod template whose volume
// volumeName mounts claimName. The volume's previous source (emptyDir, an older
// claim...) is replaced, not merged. The caller patches the workload with it,
// which rolls the pods onto the new database.
func HandoffPodTemplate(tmpl *corev1.PodTemplateSpec, volumeName, claimName, revision string) (*corev1.PodTemplateSpec, error) {
	out := tmpl.DeepCopy()
	for i := range out.Spec.Volumes {
		v := &out.Spec.Volumes[i]
		if v.Name != volumeName {
			continue
		}
		readOnly := false
		if v.PersistentVolumeClaim != nil {
			readOnly = v.PersistentVolumeClaim.ReadOnly
		}
		v.VolumeSource = corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
			ClaimName: claimName, ReadOnly: readOnly,
		}}
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[AnnotationServedRevision] = ShortRevision(revision)
		return out, nil
	}
	return nil, fmt.Errorf("the serving workload has no volume %q in spec.template.spec.volumes to hand the database to", volumeName)
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
