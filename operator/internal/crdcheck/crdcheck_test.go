package crdcheck

import (
	"os"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// The CRD generated from the API types (config/crd/bases) has every field.
func generatedCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "crd", "bases", "rdf.bulkload.io_bulkloads.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

func TestTheGeneratedCRDHasEveryField(t *testing.T) {
	missing, err := Missing(generatedCRD(t))
	if err != nil || len(missing) != 0 {
		t.Fatalf("missing %v, %v", missing, err)
	}
}

// A CRD from before a field was added (here: three of them, at three depths, one below a
// list) is found out, and the paths name them.
func TestAnOlderCRDIsFoundOut(t *testing.T) {
	crd := generatedCRD(t)
	root := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	spec, st := root.Properties["spec"], root.Properties["status"]
	database := spec.Properties["database"]
	delete(database.Properties, "jena")
	spec.Properties["database"] = database
	root.Properties["spec"] = spec
	workflow := st.Properties["workflow"]
	delete(workflow.Properties, "phase")
	st.Properties["workflow"] = workflow
	snapshots := st.Properties["snapshots"]
	delete(snapshots.Items.Schema.Properties, "triples")
	st.Properties["snapshots"] = snapshots
	delete(st.Properties, "keptVolumes")
	root.Properties["status"] = st

	missing, err := Missing(crd)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"spec.database.jena", "status.keptVolumes", "status.snapshots[].triples", "status.workflow.phase"}
	if len(missing) != len(want) {
		t.Fatalf("missing %v, want %v", missing, want)
	}
	for i := range want {
		if missing[i] != want[i] {
			t.Fatalf("missing %v, want %v", missing, want)
		}
	}
}

func TestACRDWithoutTheVersionIsAnError(t *testing.T) {
	crd := generatedCRD(t)
	crd.Spec.Versions[0].Name = "v1alpha0"
	if _, err := Missing(crd); err == nil {
		t.Fatal("no error")
	}
}
