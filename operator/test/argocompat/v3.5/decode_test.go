// Package argocompat reads the Workflows the operator writes with the Workflow type of Argo
// Workflows v3.5 (the release this module's go.mod requires): see ../check.
package argocompat

import (
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/rdf-bulkload/rdf-bulkload/operator/test/argocompat/check"
)

// Argo v3.5 is built with Kubernetes 1.24's types (k8s.io/api v0.24.3): a field of the user's
// spec.build (affinity, tolerations) or of a step's resources that Kubernetes added later is
// dropped by its workflow-controller. The operator writes none of its own.
var newerThanKubernetes124 = map[string]string{"affinity-match-label-keys": "matchLabelKeys"}

func TestOperatorWorkflowsDecodeStrictly(t *testing.T) {
	check.Decode[wfv1.Workflow](t, "github.com/argoproj/argo-workflows/v3", "v3.5", newerThanKubernetes124)
}
