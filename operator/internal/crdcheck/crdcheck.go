// Package crdcheck finds the fields of the operator's API that the installed BulkLoad CRD
// lacks. Where the CRD is not upgraded with the operator (Helm's crds/ directory, Flux's default,
// CRDs applied by hand): after an operator upgrade the API server may serve an older schema, and it drops
// every field it does not know from what the operator writes, without an error
// (status.workflow.phase: a finished workflow deleted by its TTL then looks like one never
// started, and is created again).
package crdcheck

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
)

// CRDName is the BulkLoad CRD's name.
const CRDName = "bulkloads.rdf.bulkload.io"

// apiPackage is the package whose types the check walks into; fields of other packages'
// types (metav1, corev1, resource) are checked for presence only.
var apiPackage = reflect.TypeFor[rdfv1.BulkLoad]().PkgPath()

// Missing lists, sorted, the JSON paths of the BulkLoad API's fields (json tags, through
// the API's own types) that the CRD's schema of the operator's API version lacks.
func Missing(crd *apiextensionsv1.CustomResourceDefinition) ([]string, error) {
	version := rdfv1.GroupVersion.Version
	for _, v := range crd.Spec.Versions {
		if v.Name != version {
			continue
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return nil, fmt.Errorf("CRD %s has no schema for version %s", crd.Name, version)
		}
		var missing []string
		walk(&missing, "", v.Schema.OpenAPIV3Schema, reflect.TypeFor[rdfv1.BulkLoad]())
		slices.Sort(missing)
		return missing, nil
	}
	return nil, fmt.Errorf("CRD %s does not serve version %s", crd.Name, version)
}

func walk(missing *[]string, path string, s *apiextensionsv1.JSONSchemaProps, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields {
		return
	}
	switch t.Kind() {
	case reflect.Slice:
		if s.Items != nil && s.Items.Schema != nil {
			walk(missing, path+"[]", s.Items.Schema, t.Elem())
		}
	case reflect.Map:
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			walk(missing, path+"{}", s.AdditionalProperties.Schema, t.Elem())
		}
	case reflect.Struct:
		if t.PkgPath() != apiPackage {
			return
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case name == "-" || !f.IsExported():
				continue
			case name == "" && (f.Anonymous || strings.Contains(opts, "inline")):
				walk(missing, path, s, f.Type)
				continue
			case name == "":
				continue
			}
			p := strings.TrimPrefix(path+"."+name, ".")
			sub, ok := s.Properties[name]
			if !ok {
				*missing = append(*missing, p)
				continue
			}
			walk(missing, p, &sub, f.Type)
		}
	}
}
