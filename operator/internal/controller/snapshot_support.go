package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

// Annotations that make a class the default: of StorageClasses (the beta one is still
// honoured by the DefaultStorageClass admission plugin) and of VolumeSnapshotClasses
// per driver (the snapshot controller's).
const (
	annotationDefaultStorageClass     = "storageclass.kubernetes.io/is-default-class"
	annotationDefaultStorageClassBeta = "storageclass.beta.kubernetes.io/is-default-class"
	annotationDefaultSnapshotClass    = "snapshot.storage.kubernetes.io/is-default-class"
)

// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get;list
// +kubebuilder:rbac:groups=storage.k8s.io,resources=csidrivers,verbs=get
// +kubebuilder:rbac:groups=snapshot.storage.k8s.io,resources=volumesnapshotclasses,verbs=get;list

// snapshotSupport is how the build's database volume gets snapshotted: its
// StorageClass, that class's CSI driver and the VolumeSnapshotClass of that driver.
type snapshotSupport struct {
	storageClass  *storagev1.StorageClass
	driver        string
	snapshotClass string
}

// checkSnapshotSupport is the preflight of a build: before the source is read and
// before any volume or workflow exists, it follows the build volumes' StorageClass to
// its provisioner, the CSIDriver of that name and a VolumeSnapshotClass of that driver
// (spec.snapshot.volumeSnapshotClassName, else the driver's default). A class that
// cannot be snapshotted would otherwise be found only after the whole build, when the
// snapshot never becomes ready. It runs while no build is under way (a build started
// has passed it); the classes are read uncached (the VolumeSnapshotClass API may be
// installed after the operator), so this is a few reads per reconcile of an idle BulkLoad.
func (r *BulkLoadReconciler) checkSnapshotSupport(ctx context.Context, s *scope) error {
	if s.bl.Status.SourceRevision != "" {
		return nil
	}
	log := ctrl.LoggerFrom(ctx)
	support, problem, err := r.resolveSnapshotSupport(ctx, s.bl)
	if err != nil {
		return err
	}
	wasUnsupported := false
	if c := meta.FindStatusCondition(s.before.Conditions, rdfv1.ConditionStalled); c != nil && c.Reason == status.ReasonSnapshotUnsupported {
		wasUnsupported = true
	}
	if problem == "" {
		if wasUnsupported {
			log.Info("the build volumes can now be snapshotted", "storageClass", support.storageClass.Name, "driver", support.driver, "volumeSnapshotClass", support.snapshotClass)
		} else {
			log.V(1).Info("the build volumes can be snapshotted", "storageClass", support.storageClass.Name, "driver", support.driver, "volumeSnapshotClass", support.snapshotClass)
		}
		return nil
	}
	recheck := r.dependencyRecheck()
	msg := fmt.Sprintf("%s; nothing is created until then, checking again every %s", problem, recheck)
	s.outcome = &outcome{kind: outcomeStalled, phase: rdfv1.PhaseFailed, reason: status.ReasonSnapshotUnsupported, message: msg, keepServing: true}
	s.requeue(recheck)
	s.stop = true
	if !wasUnsupported {
		log.Info("the build volumes cannot be snapshotted: not building", "problem", problem)
		r.event(s, corev1.EventTypeWarning, status.ReasonSnapshotUnsupported, "%s", problem)
	}
	return nil
}

// resolveSnapshotSupport follows StorageClass → provisioner → CSIDriver →
// VolumeSnapshotClass; problem says what is missing and how to fix it.
func (r *BulkLoadReconciler) resolveSnapshotSupport(ctx context.Context, bl *rdfv1.BulkLoad) (support *snapshotSupport, problem string, err error) {
	sc, problem, err := r.buildStorageClass(ctx, bl.Spec.Database.StorageClassName)
	if err != nil || problem != "" {
		return nil, problem, err
	}
	driver := sc.Provisioner
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: driver}, &storagev1.CSIDriver{}); apierrors.IsNotFound(err) {
		return nil, fmt.Sprintf("StorageClass %s provisions with %s, which is not a CSI driver (there is no CSIDriver %s), and VolumeSnapshots "+
			"need a CSI driver that takes snapshots: set spec.database.storageClassName to a class of such a driver "+
			"(e.g. TopoLVM, OpenEBS LVM, EBS, PD, Ceph RBD, Longhorn)", sc.Name, driver, driver), nil
	} else if err != nil {
		return nil, "", fmt.Errorf("cannot read CSIDriver %s: %w", driver, err)
	}
	snapshotClass, problem, err := r.snapshotClassFor(ctx, bl.Spec.Snapshot.VolumeSnapshotClassName, sc.Name, driver)
	if err != nil || problem != "" {
		return nil, problem, err
	}
	if sv := bl.Spec.Serving; sv != nil && sv.StorageClassName != "" && sv.StorageClassName != sc.Name {
		serving := &storagev1.StorageClass{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Name: sv.StorageClassName}, serving); apierrors.IsNotFound(err) {
			return nil, fmt.Sprintf("StorageClass %s (spec.serving.storageClassName) does not exist: create it, or leave the field empty "+
				"to restore into %s", sv.StorageClassName, sc.Name), nil
		} else if err != nil {
			return nil, "", fmt.Errorf("cannot read StorageClass %s: %w", sv.StorageClassName, err)
		}
		if serving.Provisioner != driver {
			return nil, fmt.Sprintf("StorageClass %s (spec.serving.storageClassName) provisions with %s, but the snapshots are of driver %s, "+
				"which alone can restore them: name a class of %s, or leave the field empty to restore into %s",
				serving.Name, serving.Provisioner, driver, driver, sc.Name), nil
		}
	}
	return &snapshotSupport{storageClass: sc, driver: driver, snapshotClass: snapshotClass}, "", nil
}

// buildStorageClass is the class the build volumes get: the named one, else the
// cluster's default (as the DefaultStorageClass admission plugin picks it: the newest
// of several).
func (r *BulkLoadReconciler) buildStorageClass(ctx context.Context, name string) (*storagev1.StorageClass, string, error) {
	if name != "" {
		sc := &storagev1.StorageClass{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, sc); apierrors.IsNotFound(err) {
			return nil, fmt.Sprintf("StorageClass %s (spec.database.storageClassName) does not exist: create it, or name a class "+
				"of a CSI driver that takes snapshots", name), nil
		} else if err != nil {
			return nil, "", fmt.Errorf("cannot read StorageClass %s: %w", name, err)
		}
		return sc, "", nil
	}
	sc, err := r.defaultStorageClass(ctx)
	if err != nil {
		return nil, "", err
	}
	if sc == nil {
		return nil, "spec.database.storageClassName is empty and the cluster has no default StorageClass: name a class " +
			"of a CSI driver that takes snapshots", nil
	}
	return sc, "", nil
}

// defaultStorageClass is the class a claim without one gets, nil when there is none.
func (r *BulkLoadReconciler) defaultStorageClass(ctx context.Context) (*storagev1.StorageClass, error) {
	list := &storagev1.StorageClassList{}
	if err := r.APIReader.List(ctx, list); err != nil {
		return nil, fmt.Errorf("cannot list StorageClasses: %w", err)
	}
	var def *storagev1.StorageClass
	for i := range list.Items {
		sc := &list.Items[i]
		if sc.Annotations[annotationDefaultStorageClass] != "true" && sc.Annotations[annotationDefaultStorageClassBeta] != "true" {
			continue
		}
		if def == nil || sc.CreationTimestamp.After(def.CreationTimestamp.Time) ||
			(sc.CreationTimestamp.Equal(&def.CreationTimestamp) && sc.Name < def.Name) {
			def = sc
		}
	}
	return def, nil
}

// snapshotClassFor is the VolumeSnapshotClass the build's snapshot gets: the named one,
// which must be of the driver, else the driver's one default class.
func (r *BulkLoadReconciler) snapshotClassFor(ctx context.Context, name, storageClass, driver string) (string, string, error) {
	if name != "" {
		vsc := &snapv1.VolumeSnapshotClass{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, vsc); apierrors.IsNotFound(err) {
			return "", fmt.Sprintf("VolumeSnapshotClass %s (spec.snapshot.volumeSnapshotClassName) does not exist: create it with "+
				"driver: %s (the provisioner of StorageClass %s)", name, driver, storageClass), nil
		} else if err != nil {
			return "", "", fmt.Errorf("cannot read VolumeSnapshotClass %s: %w", name, err)
		}
		if vsc.Driver != driver {
			return "", fmt.Sprintf("VolumeSnapshotClass %s (spec.snapshot.volumeSnapshotClassName) is of driver %s, but StorageClass %s "+
				"provisions with %s: name a VolumeSnapshotClass of driver %s", name, vsc.Driver, storageClass, driver, driver), nil
		}
		return name, "", nil
	}
	list := &snapv1.VolumeSnapshotClassList{}
	if err := r.APIReader.List(ctx, list); err != nil {
		return "", "", fmt.Errorf("cannot list VolumeSnapshotClasses: %w", err)
	}
	var ofDriver, defaults []string
	for _, vsc := range list.Items {
		if vsc.Driver != driver {
			continue
		}
		ofDriver = append(ofDriver, vsc.Name)
		if vsc.Annotations[annotationDefaultSnapshotClass] == "true" {
			defaults = append(defaults, vsc.Name)
		}
	}
	slices.Sort(ofDriver)
	slices.Sort(defaults)
	switch {
	case len(defaults) == 1:
		return defaults[0], "", nil
	case len(defaults) > 1:
		// The snapshot controller refuses to choose between them.
		return "", fmt.Sprintf("VolumeSnapshotClasses %s are all marked default for driver %s, and the snapshot controller takes "+
			"none of them: name one in spec.snapshot.volumeSnapshotClassName, or remove the annotation %s from all but one",
			strings.Join(defaults, ", "), driver, annotationDefaultSnapshotClass), nil
	case len(ofDriver) > 0:
		return "", fmt.Sprintf("no VolumeSnapshotClass of driver %s (the provisioner of StorageClass %s) is marked default "+
			"(there are %s): name one in spec.snapshot.volumeSnapshotClassName, or annotate one %s: \"true\"",
			driver, storageClass, strings.Join(ofDriver, ", "), annotationDefaultSnapshotClass), nil
	default:
		return "", fmt.Sprintf("there is no VolumeSnapshotClass of driver %s (the provisioner of StorageClass %s): if the driver takes "+
			"snapshots (its csi-snapshotter sidecar runs), create a VolumeSnapshotClass with driver: %s and name it in "+
			"spec.snapshot.volumeSnapshotClassName or annotate it %s: \"true\"; otherwise set spec.database.storageClassName "+
			"to a class of a driver that does", driver, storageClass, driver, annotationDefaultSnapshotClass), nil
	}
}
