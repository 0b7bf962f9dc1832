package controller

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/source"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/crdcheck"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

// crdSchema reads the installed BulkLoad CRD (uncached; a test may stand in for it) and
// remembers, for a recheck period, which of the API's fields it lacks.
type crdSchema struct {
	read func(ctx context.Context) (*apiextensionsv1.CustomResourceDefinition, error)

	mu        sync.Mutex
	checkedAt time.Time
	missing   []string
}

// outdated lists the API's fields the installed CRD lacks (none when it is current).
func (c *crdSchema) outdated(ctx context.Context, now time.Time, recheck time.Duration) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.checkedAt.IsZero() && now.Sub(c.checkedAt) < recheck && now.After(c.checkedAt) {
		return c.missing, nil
	}
	crd, err := c.read(ctx)
	if err != nil {
		return nil, fmt.Errorf("cannot read the BulkLoad CRD %s: %w", crdcheck.CRDName, err)
	}
	missing, err := crdcheck.Missing(crd)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 && len(c.missing) == 0 {
		ctrl.LoggerFrom(ctx).Info("the BulkLoad CRD lacks fields of this operator's API", "crd", crdcheck.CRDName, "missing", missing)
	}
	c.checkedAt, c.missing = now, missing
	return missing, nil
}

// readCRD reads the BulkLoad CRD as unstructured data: the manager's scheme need not know
// apiextensions.
func readCRD(reader client.Reader) func(ctx context.Context) (*apiextensionsv1.CustomResourceDefinition, error) {
	return func(ctx context.Context) (*apiextensionsv1.CustomResourceDefinition, error) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		if err := reader.Get(ctx, client.ObjectKey{Name: crdcheck.CRDName}, u); err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
			return nil, fmt.Errorf("cannot decode the BulkLoad CRD: %w", err)
		}
		return crd, nil
	}
}

// DefaultDependencyRecheck is how often a BulkLoad waiting for a missing API looks again.
const DefaultDependencyRecheck = 30 * time.Second

// dependency is an API from another project the builds need. Its CRDs may be installed
// after the operator: the controller then watches the kind from the moment it appears,
// without a restart (a watch on a kind the API server does not serve would keep the
// manager from starting).
type dependency struct {
	gvk     schema.GroupVersionKind
	install string
	// watch is the event source of the kind, set up once it is served.
	watch func() source.Source
}

func (d *dependency) String() string {
	return fmt.Sprintf("%s (%s)", d.gvk.Kind, d.gvk.GroupVersion())
}

// dependencies tracks which dependencies are served and starts their watches.
type dependencies struct {
	mapper   meta.RESTMapper
	addWatch func(source.Source) error
	all      []*dependency

	mu      sync.Mutex
	watched map[schema.GroupVersionKind]bool
}

func newDependencies(mapper meta.RESTMapper, addWatch func(source.Source) error, deps ...*dependency) *dependencies {
	return &dependencies{mapper: mapper, addWatch: addWatch, all: deps, watched: map[schema.GroupVersionKind]bool{}}
}

// ensure returns the dependencies the API server does not serve; each one it does
// serve gets its watch, once. The RESTMapper asks the API server again on every miss,
// so a CRD installed meanwhile is found.
func (d *dependencies) ensure(ctx context.Context) ([]*dependency, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	log := ctrl.LoggerFrom(ctx)
	var missing []*dependency
	for _, dep := range d.all {
		if d.watched[dep.gvk] {
			continue
		}
		if _, err := d.mapper.RESTMapping(dep.gvk.GroupKind(), dep.gvk.Version); err != nil {
			if meta.IsNoMatchError(err) {
				missing = append(missing, dep)
				continue
			}
			return nil, fmt.Errorf("cannot tell whether the API server serves %s: %w", dep, err)
		}
		if dep.watch != nil {
			if err := d.addWatch(dep.watch()); err != nil {
				return nil, fmt.Errorf("cannot watch %s: %w", dep, err)
			}
		}
		d.watched[dep.gvk] = true
		log.Info("dependency present, watching it", "kind", dep.String())
	}
	return missing, nil
}

// served says whether the kind of obj is known to be served (its watch runs).
func (d *dependencies) served(gvk schema.GroupVersionKind) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.watched[gvk]
}

// missingMessage names the missing APIs and how to install them.
func missingMessage(missing []*dependency, recheck time.Duration) string {
	parts := make([]string, len(missing))
	for i, dep := range missing {
		parts[i] = fmt.Sprintf("the API server does not serve %s: %s", dep, dep.install)
	}
	return strings.Join(parts, "; ") + fmt.Sprintf("; checking again every %s", recheck)
}

var (
	workflowGVK       = wfv1.SchemeGroupVersion.WithKind("Workflow")
	volumeSnapshotGVK = snapv1.SchemeGroupVersion.WithKind("VolumeSnapshot")
	// volumeSnapshotClassGVK is read (uncached) by the preflight, not watched.
	volumeSnapshotClassGVK = snapv1.SchemeGroupVersion.WithKind("VolumeSnapshotClass")
)

// checkDependencies stops the phases while Argo Workflows or the VolumeSnapshot API
// is missing, with a condition that says which and how to install it; the BulkLoad
// looks again every DependencyRecheck. With them present, the build volumes' class
// must be one that can be snapshotted (checkSnapshotSupport).
func (r *BulkLoadReconciler) checkDependencies(ctx context.Context, s *scope) error {
	if outdated, err := r.crd.outdated(ctx, s.now, r.dependencyRecheck()); err != nil {
		return err
	} else if len(outdated) > 0 {
		recheck := r.dependencyRecheck()
		msg := fmt.Sprintf("the BulkLoad CRD (customresourcedefinition %s) is older than this operator: it lacks %s, which the API server "+
			"drops from what the operator writes; upgrade it to the chart's: helm upgrade the release that installs it (crds.install=true), or "+
			"helm template charts/rdf-bulkload --show-only templates/crds.yaml | kubectl apply --server-side --force-conflicts -f - (docs/argo-and-crds.md). Nothing is built until then; "+
			"checking again every %s", crdcheck.CRDName, strings.Join(outdated, ", "), recheck)
		s.outcome = &outcome{kind: outcomeDependencyMissing, reason: status.ReasonCRDOutdated, message: msg}
		s.requeue(recheck)
		s.stop = true
		if !s.saidReason(status.ReasonCRDOutdated) {
			ctrl.LoggerFrom(ctx).Info("the BulkLoad CRD is older than this operator: not building until it is upgraded", "missing", outdated)
			r.event(s, corev1.EventTypeWarning, status.ReasonCRDOutdated, "%s", msg)
		}
		return nil
	}
	missing, err := r.deps.ensure(ctx)
	if err != nil {
		return err
	}
	if len(missing) == 0 {
		return r.checkSnapshotSupport(ctx, s)
	}
	recheck := r.dependencyRecheck()
	msg := missingMessage(missing, recheck)
	s.outcome = &outcome{kind: outcomeDependencyMissing, reason: status.ReasonDependencyMissing, message: msg}
	s.requeue(recheck)
	s.stop = true
	if c := meta.FindStatusCondition(s.before.Conditions, rdfv1.ConditionStalled); c == nil || c.Reason != status.ReasonDependencyMissing {
		ctrl.LoggerFrom(ctx).Info("waiting for a missing dependency", "message", msg)
		r.event(s, corev1.EventTypeWarning, status.ReasonDependencyMissing, "%s", msg)
	}
	return nil
}

func (r *BulkLoadReconciler) dependencyRecheck() time.Duration {
	if r.DependencyRecheck > 0 {
		return r.DependencyRecheck
	}
	return DefaultDependencyRecheck
}

// listIfServed lists the BulkLoad's children of a dependency's kind; when the API
// server does not serve the kind there are none.
func (r *BulkLoadReconciler) listIfServed(ctx context.Context, gvk schema.GroupVersionKind, list client.ObjectList, bl *rdfv1.BulkLoad, what string) error {
	if !r.deps.served(gvk) {
		missing, err := r.deps.ensure(ctx)
		if err != nil {
			return err
		}
		for _, m := range missing {
			if m.gvk == gvk {
				return nil
			}
		}
	}
	return r.listOwned(ctx, bl, list, what)
}
