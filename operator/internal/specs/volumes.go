package specs

import (
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
)

// DataClaim is the database volume of a build. It is owned by the BulkLoad: once
// the snapshot is ready the database lives on in the snapshot.
func DataClaim(bl *rdfv1.BulkLoad, revision string) *corev1.PersistentVolumeClaim {
	return buildClaim(bl, revision, RoleData, DataClaimName(bl, revision), bl.Spec.Database.Size)
}

// ScratchClaim holds a build's downloaded inputs and the loader's sort runs. It is
// kept across attempts of one revision so a retried load resumes from checkpoints.
func ScratchClaim(bl *rdfv1.BulkLoad, revision string) *corev1.PersistentVolumeClaim {
	return buildClaim(bl, revision, RoleScratch, ScratchClaimName(bl, revision), bl.Spec.Database.EffectiveScratchSize())
}

func buildClaim(bl *rdfv1.BulkLoad, revision, role, name string, size resource.Quantity) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       bl.Namespace,
			Labels:          childLabels(bl, revision, role),
			Annotations:     childAnnotations(revision),
			OwnerReferences: []metav1.OwnerReference{ControllerReference(bl)},
		},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: size},
			},
		},
	}
	if sc := bl.Spec.Database.StorageClassName; sc != "" {
		pvc.Spec.StorageClassName = ptr.To(sc)
	}
	return pvc
}

// DatabaseSnapshot is the VolumeSnapshot of a build's database volume. It carries
// labels but no owner reference: snapshots are retained by policy, not by the
// lifetime of the BulkLoad.
func DatabaseSnapshot(bl *rdfv1.BulkLoad, revision string) *snapv1.VolumeSnapshot {
	vs := &snapv1.VolumeSnapshot{
		TypeMeta: metav1.TypeMeta{APIVersion: snapv1.SchemeGroupVersion.String(), Kind: "VolumeSnapshot"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        SnapshotName(bl, revision),
			Namespace:   bl.Namespace,
			Labels:      childLabels(bl, revision, RoleSnapshot),
			Annotations: childAnnotations(revision),
		},
		Spec: snapv1.VolumeSnapshotSpec{
			Source: snapv1.VolumeSnapshotSource{PersistentVolumeClaimName: ptr.To(DataClaimName(bl, revision))},
		},
	}
	if c := bl.Spec.Snapshot.VolumeSnapshotClassName; c != "" {
		vs.Spec.VolumeSnapshotClassName = ptr.To(c)
	}
	return vs
}

// AnnotationSelectedNode is the annotation by which the scheduler tells a CSI
// external-provisioner where to create a WaitForFirstConsumer volume.
const AnnotationSelectedNode = "volume.kubernetes.io/selected-node"

// AnnotationSourceNode on a VolumeSnapshot names the node its database volume was on,
// when that volume was bound to the node (local storage: TopoLVM, local NVMe).
const AnnotationSourceNode = "rdf.bulkload.io/source-node"

// ServingClaim is the PVC restored from a revision's snapshot for the query
// workload. restoreSize is the snapshot's (zero when the driver does not say).
// Not owned by the BulkLoad: the workload may mount it after the BulkLoad is gone.
//
// node, when set, is the node the snapshot's volume was bound to. Node-local drivers
// restore a snapshot only there, but with WaitForFirstConsumer the scheduler picks the
// node for the first consumer (the serving pod) without knowing that. So the claim
// carries the selected-node annotation from the start: the external-provisioner then
// creates the volume on that node at once, and the scheduler places the serving pod
// where the volume is (the PV's node affinity; before that, the annotation).
func ServingClaim(bl *rdfv1.BulkLoad, revision string, restoreSize *resource.Quantity, node string) *corev1.PersistentVolumeClaim {
	size := bl.Spec.Database.Size.DeepCopy()
	if restoreSize != nil && restoreSize.Cmp(size) > 0 {
		size = restoreSize.DeepCopy()
	}
	modes := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	sc := bl.Spec.Database.StorageClassName
	if s := bl.Spec.Serving; s != nil {
		if len(s.AccessModes) > 0 {
			modes = append([]corev1.PersistentVolumeAccessMode(nil), s.AccessModes...)
		}
		if s.StorageClassName != "" {
			sc = s.StorageClassName
		}
	}
	pvc := &corev1.PersistentVolumeClaim{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        ServingClaimName(bl, revision),
			Namespace:   bl.Namespace,
			Labels:      childLabels(bl, revision, RoleServing),
			Annotations: childAnnotations(revision),
		},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: modes,
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: size},
			},
			DataSource: &corev1.TypedLocalObjectReference{
				APIGroup: ptr.To(snapv1.GroupName),
				Kind:     "VolumeSnapshot",
				Name:     SnapshotName(bl, revision),
			},
		},
	}
	if sc != "" {
		pvc.Spec.StorageClassName = ptr.To(sc)
	}
	if node != "" {
		pvc.Annotations[AnnotationSelectedNode] = node
	}
	return pvc
}

// NodeBound returns node when the persistent volume is bound to that node (one of its
// node-affinity terms requires a topology value equal to the node's name, as TopoLVM's
// topology.topolvm.io/node, local volumes' kubernetes.io/hostname or the CSI hostpath
// driver's do), "" for volumes reachable from more nodes (a zone, no affinity).
func NodeBound(pv *corev1.PersistentVolume, node string) string {
	if node == "" || pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return ""
	}
	for _, term := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		for _, req := range term.MatchExpressions {
			if req.Operator == corev1.NodeSelectorOpIn && len(req.Values) == 1 && req.Values[0] == node {
				return node
			}
		}
	}
	return ""
}
