// Package specs builds the child objects of a BulkLoad (Argo Workflow, PVCs,
// VolumeSnapshot, the serving handoff) as pure functions of the BulkLoad and the
// build's identity, so they are unit-tested without a cluster.
package specs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
)

// Labels put on every child object; the controller finds its children by them.
const (
	LabelBulkLoad = "rdf.bulkload.io/bulkload"
	LabelRevision = "rdf.bulkload.io/revision"
	LabelAttempt  = "rdf.bulkload.io/attempt"
	LabelRole     = "rdf.bulkload.io/role"
	// LabelBulkLoadUID is the UID of the BulkLoad that made the child: a BulkLoad
	// recreated with the same name has another UID and leaves the old one's children
	// (retained snapshots, the served volume) alone.
	LabelBulkLoadUID = "rdf.bulkload.io/bulkload-uid"

	// AnnotationRevision carries the full source revision (labels hold only its short form).
	AnnotationRevision = "rdf.bulkload.io/source-revision"

	// LabelManagedBy is ManagedBy on every child; with LabelBulkLoad it selects what
	// the operator caches.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "rdf-bulkload-operator"
)

// Roles of child objects (LabelRole values).
const (
	RoleBuild    = "build"    // Workflow
	RoleData     = "data"     // database volume of a build; the snapshot's source
	RoleScratch  = "scratch"  // downloaded inputs + loader temp files
	RoleSnapshot = "snapshot" // VolumeSnapshot of a built database
	RoleServing  = "serving"  // PVC restored from a snapshot for the query workload
)

// ShortRevision is a 10-hex-digit name-safe token for a source revision, whatever
// its format (the watch resolver and the manual trigger produce different ones).
func ShortRevision(revision string) string {
	sum := sha256.Sum256([]byte(revision))
	return hex.EncodeToString(sum[:])[:10]
}

// WorkflowName is deterministic in (BulkLoad, revision, attempt) so that a restarted
// controller finds the workflow it created instead of starting a second one.
func WorkflowName(bl *rdfv1.BulkLoad, revision string, attempt int32) string {
	return fmt.Sprintf("%s-%s-%d", bl.Name, ShortRevision(revision), attempt)
}

// DataClaimName is the database volume of one revision's build.
func DataClaimName(bl *rdfv1.BulkLoad, revision string) string {
	return fmt.Sprintf("%s-data-%s", bl.Name, ShortRevision(revision))
}

// ScratchClaimName is the scratch volume of one revision's build.
func ScratchClaimName(bl *rdfv1.BulkLoad, revision string) string {
	return fmt.Sprintf("%s-scratch-%s", bl.Name, ShortRevision(revision))
}

// SnapshotName is the VolumeSnapshot of one revision's database.
func SnapshotName(bl *rdfv1.BulkLoad, revision string) string {
	return fmt.Sprintf("%s-%s", bl.Name, ShortRevision(revision))
}

// ServingClaimName is the PVC restored from one revision's snapshot.
func ServingClaimName(bl *rdfv1.BulkLoad, revision string) string {
	return fmt.Sprintf("%s-db-%s", bl.Name, ShortRevision(revision))
}

// SelectorLabels select every child of a BulkLoad's name, including those of an
// earlier BulkLoad of that name (see OwnedBy).
func SelectorLabels(bl *rdfv1.BulkLoad) map[string]string {
	return map[string]string{LabelBulkLoad: bl.Name}
}

func childLabels(bl *rdfv1.BulkLoad, revision, role string) map[string]string {
	return map[string]string{
		LabelBulkLoad:    bl.Name,
		LabelBulkLoadUID: string(bl.UID),
		LabelRevision:    ShortRevision(revision),
		LabelRole:        role,
		LabelManagedBy:   ManagedBy,
	}
}

func childAnnotations(revision string) map[string]string {
	return map[string]string{AnnotationRevision: revision}
}

// OwnedBy says whether child was made by this BulkLoad (not by an earlier one of the
// same name): by its UID label, or, for children from before that label, by a
// controller reference to the BulkLoad's UID. A child with neither (a snapshot or
// serving volume from an older operator) is the BulkLoad's only if known says so.
func OwnedBy(bl *rdfv1.BulkLoad, child metav1.Object, known func(name string) bool) bool {
	if uid, ok := child.GetLabels()[LabelBulkLoadUID]; ok {
		return uid == string(bl.UID)
	}
	for _, ref := range child.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			return ref.UID == bl.UID
		}
	}
	return known != nil && known(child.GetName())
}
