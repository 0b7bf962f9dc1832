// Package check reads the Workflows the operator writes (the golden file
// operator/internal/specs/testdata/workflows.jsonl, kept equal to specs.Workflow by the
// operator's TestWorkflowsGolden) into the Workflow type of one Argo Workflows release.
//
// Argo's Workflow CRD keeps unknown fields (x-kubernetes-preserve-unknown-fields), so the API
// server stores a field a workflow-controller does not know, and that controller's client
// (case-sensitive, not strict) then drops it without a word. Each module beside this one
// depends on one Argo release (operator/test/argocompat/vX.Y) and calls Decode with its
// Workflow type, which fails when
//   - the release's types refuse a field (json.Decoder.DisallowUnknownFields);
//   - anything is lost or changed when the decoded Workflow is written again: this reaches
//     what DisallowUnknownFields cannot (inside types with their own UnmarshalJSON, such as
//     the steps of a template, and keys matched case-insensitively by encoding/json);
//   - a key field of the build (entrypoint, steps, images, commands and arguments, retry
//     strategies, the load step's output parameter, volumes, security contexts, placement,
//     deadline, pod GC and TTLs, owner) is not what the operator wrote.
package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// GoldenPath is the golden file, relative to a module directory beside this one.
const GoldenPath = "../../../internal/specs/testdata/workflows.jsonl"

// Case is a line of the golden file: a case of the operator's matrix and its Workflow.
type Case struct {
	Name     string          `json:"name"`
	Workflow json.RawMessage `json:"workflow"`
}

// Cases reads the golden file.
func Cases(t testing.TB) []Case {
	t.Helper()
	data, err := os.ReadFile(GoldenPath)
	if err != nil {
		t.Fatalf("%v (the operator's `make generate-workflows` writes it)", err)
	}
	var cases []Case
	for n, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var c Case
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatalf("%s:%d: %v", GoldenPath, n+1, err)
		}
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		t.Fatalf("%s has no case", GoldenPath)
	}
	return cases
}

// Release is the version of module that the go.mod of the calling module (the test's working
// directory) requires, which is the one its test binary is built with (the check requires
// nothing else). It fails unless that is a release of minor (e.g. "v3.5"), so that a go.mod
// moved to another minor is noticed, and when the module is replaced.
func Release(t testing.TB, module, minor string) string {
	t.Helper()
	data, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`(?m)^\s*(replace\s+)?` + regexp.QuoteMeta(module) + `(\s+v\S+)?\s+=>`).Match(data) {
		t.Fatalf("go.mod replaces %s: the check must read the release as published", module)
	}
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?` + regexp.QuoteMeta(module) + `\s+(v\S+)`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("go.mod does not require %s", module)
	}
	version := string(m[1])
	if !strings.HasPrefix(version, minor+".") {
		t.Fatalf("go.mod requires %s %s, not a %s release", module, version, minor)
	}
	return version
}

// Decode decodes every Workflow of the golden file strictly into W (the Workflow type of the
// release of module named by minor), writes it again and compares. refused names the cases the
// release is known to refuse, each with the unknown field it refuses (a field the user set,
// newer than the release's Kubernetes types): such a case must be refused for that field, and
// read leniently (as the workflow-controller reads it), it must lose that field and nothing else.
func Decode[W any](t *testing.T, module, minor string, refused map[string]string) {
	version := Release(t, module, minor)
	t.Logf("Argo Workflows %s (%s)", version, module)
	names := map[string]bool{}
	for _, c := range Cases(t) {
		names[c.Name] = true
		t.Run(c.Name, func(t *testing.T) {
			var w W
			dec := json.NewDecoder(bytes.NewReader(c.Workflow))
			dec.DisallowUnknownFields()
			err := dec.Decode(&w)
			field, known := refused[c.Name]
			switch {
			case known && err == nil:
				t.Fatalf("Argo %s now reads the field %s that it was known to refuse: take the case out of its refusals (and the docs)", version, field)
			case known && !strings.Contains(err.Error(), fmt.Sprintf("unknown field %q", field)):
				t.Fatalf("Argo %s refuses the Workflow the operator writes: %v (known: it refuses %s)", version, err, field)
			case known:
				w = *new(W)
				if err := json.Unmarshal(c.Workflow, &w); err != nil {
					t.Fatal(err)
				}
			case err != nil:
				t.Fatalf("Argo %s refuses the Workflow the operator writes: %v", version, err)
			}
			back, err := json.Marshal(&w)
			if err != nil {
				t.Fatal(err)
			}
			written, read := generic(t, c.Workflow), generic(t, back)
			if known {
				lost := Diff("", written, read)
				for _, d := range lost {
					t.Logf("Argo %s drops a field the user set (known): %s", version, d)
				}
				if len(lost) == 0 {
					t.Errorf("Argo %s refuses %s but keeps it when read leniently", version, field)
				}
				written = without(written, field)
			}
			for _, d := range append(Diff("", written, read), KeyFields(written, read)...) {
				t.Errorf("Argo %s: %s", version, d)
			}
		})
	}
	for name := range refused {
		if !names[name] {
			t.Errorf("the known refusal of case %s names no case of %s", name, GoldenPath)
		}
	}
}

func generic(t testing.TB, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Diff lists what differs from written in read: a value lost or changed, or a value read adds.
// A null written and absent when read back is not a difference, nor is an empty value (null,
// an empty object or list) that read adds: Go's omitempty and pointer choices differ between
// releases without changing what a field means. An empty object or list that is lost is a
// difference (an empty namespaceSelector means every namespace, an absent one the pod's own).
func Diff(path string, written, read any) []string {
	switch w := written.(type) {
	case map[string]any:
		r, ok := read.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: written %s, read back %s", orRoot(path), show(written), show(read))}
		}
		var out []string
		for _, k := range sortedKeys(w) {
			rv, present := r[k]
			switch {
			case !present && w[k] != nil:
				out = append(out, fmt.Sprintf("%s.%s is lost (written %s)", path, k, show(w[k])))
			case present:
				out = append(out, Diff(path+"."+k, w[k], rv)...)
			}
		}
		for _, k := range sortedKeys(r) {
			if _, written := w[k]; !written && !isEmpty(r[k]) {
				out = append(out, fmt.Sprintf("%s.%s is added (read back %s)", path, k, show(r[k])))
			}
		}
		return out
	case []any:
		r, ok := read.([]any)
		if !ok || len(r) != len(w) {
			if isEmpty(written) && isEmpty(read) {
				return nil
			}
			return []string{fmt.Sprintf("%s: written %s, read back %s", orRoot(path), show(written), show(read))}
		}
		var out []string
		for i := range w {
			out = append(out, Diff(fmt.Sprintf("%s[%d]", path, i), w[i], r[i])...)
		}
		return out
	default:
		if isEmpty(written) && isEmpty(read) {
			return nil
		}
		if !reflect.DeepEqual(written, read) {
			return []string{fmt.Sprintf("%s: written %s, read back %s", orRoot(path), show(written), show(read))}
		}
		return nil
	}
}

// keyPaths are the fields of the build that must reach the workflow-controller as written (a
// * stands for every element of a list).
var keyPaths = []string{
	"metadata.name", "metadata.namespace", "metadata.labels", "metadata.annotations", "metadata.ownerReferences",
	"spec.entrypoint", "spec.serviceAccountName", "spec.securityContext", "spec.podSpecPatch",
	"spec.nodeSelector", "spec.tolerations", "spec.affinity", "spec.podMetadata", "spec.podPriorityClassName",
	"spec.activeDeadlineSeconds", "spec.podGC", "spec.ttlStrategy", "spec.volumes",
	"spec.templates.*.name", "spec.templates.*.steps", "spec.templates.*.metadata",
	"spec.templates.*.container.image", "spec.templates.*.container.imagePullPolicy",
	"spec.templates.*.container.command", "spec.templates.*.container.args", "spec.templates.*.container.env",
	"spec.templates.*.container.resources", "spec.templates.*.container.volumeMounts",
	"spec.templates.*.container.securityContext", "spec.templates.*.container.ports",
	"spec.templates.*.container.terminationMessagePolicy",
	"spec.templates.*.retryStrategy.limit", "spec.templates.*.retryStrategy.retryPolicy", "spec.templates.*.retryStrategy.expression",
	"spec.templates.*.outputs.parameters",
}

// requiredPaths must be in every Workflow the operator writes (else the golden file is not
// what this check expects to read).
var requiredPaths = []string{
	"spec.entrypoint", "spec.podSpecPatch", "spec.activeDeadlineSeconds", "spec.podGC", "spec.ttlStrategy",
	"spec.templates.*.retryStrategy.expression", "spec.templates.*.outputs.parameters",
}

// KeyFields lists the key fields of written that read lacks or holds otherwise.
func KeyFields(written, read any) []string {
	var out []string
	for _, p := range requiredPaths {
		if len(lookup("", written, strings.Split(p, "."))) == 0 {
			out = append(out, fmt.Sprintf("the operator's workflow has no %s", p))
		}
	}
	for _, p := range keyPaths {
		parts := strings.Split(p, ".")
		w, r := lookup("", written, parts), lookup("", read, parts)
		for _, at := range sortedKeys(w) {
			if rv, ok := r[at]; !ok && w[at] != nil || ok && !reflect.DeepEqual(w[at], rv) {
				out = append(out, fmt.Sprintf("key field %s: written %s, read back %s", at, show(w[at]), show(rv)))
			}
		}
		for _, at := range sortedKeys(r) {
			if _, ok := w[at]; !ok && !isEmpty(r[at]) {
				out = append(out, fmt.Sprintf("key field %s: not written, read back %s", at, show(r[at])))
			}
		}
	}
	return out
}

// lookup resolves a dotted path, "*" fanning out over a list; it returns the values found by
// their concrete paths (spec.templates[2].name).
func lookup(at string, v any, parts []string) map[string]any {
	if len(parts) == 0 {
		return map[string]any{at: v}
	}
	out := map[string]any{}
	switch x := v.(type) {
	case map[string]any:
		if next, ok := x[parts[0]]; ok {
			return lookup(strings.TrimPrefix(at+"."+parts[0], "."), next, parts[1:])
		}
	case []any:
		if parts[0] == "*" {
			for i, e := range x {
				for k, found := range lookup(fmt.Sprintf("%s[%d]", at, i), e, parts[1:]) {
					out[k] = found
				}
			}
		}
	}
	return out
}

// without is v without the object members named field, at any depth.
func without(v any, field string) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k != field {
				out[k] = without(e, field)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = without(e, field)
		}
		return out
	}
	return v
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, e := range x {
			if !isEmpty(e) {
				return false
			}
		}
		return true
	case []any:
		return len(x) == 0
	}
	return false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func show(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(data) > 300 {
		return string(data[:300]) + "…"
	}
	return string(data)
}

func orRoot(path string) string {
	if path == "" {
		return "the workflow"
	}
	return path
}
