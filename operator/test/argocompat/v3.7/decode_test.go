// Package argocompat reads the Workflows the operator writes with the Workflow type of Argo
// Workflows v3.7 (the release this module's go.mod requires): see ../check.
package argocompat

import (
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/rdf-bulkload/rdf-bulkload/operator/test/argocompat/check"
)

func TestOperatorWorkflowsDecodeStrictly(t *testing.T) {
	check.Decode[wfv1.Workflow](t, "github.com/argoproj/argo-workflows/v3", "v3.7", nil)
}
