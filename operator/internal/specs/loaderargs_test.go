package specs

import (
	"bytes"
	"encoding/json"
	"flag"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
)

// The load step's command line is a contract between the operator, which writes it, and the
// loader, which parses it. LoaderArgsGoldenPath holds it for a matrix of specs, one JSON object
// a line: what the spec means (expect, from the API's Effective* rules and the step's paths,
// not from the arguments) and the arguments LoaderArgs writes for it. This test fails when the
// two drift apart; the loader's CLI crate parses every line with its own parser and checks that
// it reads expect back (loader-image/crates/cli/src/loader_args_contract.rs); the e2e scripts
// run the load step from this file instead of restating it. Regenerate with
// `make generate-loader-args` (go test ./internal/specs -run TestLoaderArgsGolden -update).
const LoaderArgsGoldenPath = "testdata/loader-args.jsonl"

var update = flag.Bool("update", false, "rewrite "+LoaderArgsGoldenPath+" from LoaderArgs")

// loaderArgsExpect is what the loader must read from the arguments, named after its options.
type loaderArgsExpect struct {
	Loc                  string   `json:"loc"`
	Tmpdir               string   `json:"tmpdir"`
	MemoryBytes          int64    `json:"memory_bytes"`
	Threads              int32    `json:"threads"`
	OnError              string   `json:"on_error"`
	MaxRejects           *int64   `json:"max_rejects"` // null: the loader's default
	Rejects              *string  `json:"rejects"`     // null: the loader's default
	Report               string   `json:"report"`
	Summary              string   `json:"summary"`
	SourceReport         string   `json:"source_report"`
	MetricsAddr          string   `json:"metrics_addr"`
	MetricsLingerSeconds float64  `json:"metrics_linger_seconds"` // 0: no linger
	SkipPlanCheck        bool     `json:"skip_plan_check"`
	Jena                 string   `json:"jena"`
	Inputs               []string `json:"inputs"`
}

type loaderArgsCase struct {
	Name   string           `json:"name"`
	Expect loaderArgsExpect `json:"expect"`
	Args   []string         `json:"args"`
}

// loaderArgsMatrix is the specs the golden file covers: every way the loader spec reaches the
// command line (budget from the spec, the limit, the request or the default; threads likewise;
// both bad-input policies with and without a reject limit; sizes in every unit FormatBytes
// writes; the metrics linger in whole and fractional seconds; both Jena releases).
func loaderArgsMatrix() []struct {
	name   string
	loader rdfv1.LoaderSpec
	linger time.Duration
	jena   rdfv1.JenaRelease
} {
	res := func(kind, memory, cpu string) corev1.ResourceRequirements {
		list := corev1.ResourceList{}
		if memory != "" {
			list[corev1.ResourceMemory] = resource.MustParse(memory)
		}
		if cpu != "" {
			list[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if kind == "limits" {
			return corev1.ResourceRequirements{Limits: list}
		}
		return corev1.ResourceRequirements{Requests: list}
	}
	budget := func(q string) *resource.Quantity { return ptr.To(resource.MustParse(q)) }
	return []struct {
		name   string
		loader rdfv1.LoaderSpec
		linger time.Duration
		jena   rdfv1.JenaRelease
	}{
		{name: "defaults"},
		{name: "limits", loader: rdfv1.LoaderSpec{Resources: res("limits", "16Gi", "7500m")}},
		{name: "requests", loader: rdfv1.LoaderSpec{Resources: res("requests", "3Gi", "2")}},
		{name: "decimal-limit", loader: rdfv1.LoaderSpec{Resources: res("limits", "1000M", "500m")}},
		{name: "budget-and-threads", loader: rdfv1.LoaderSpec{MemoryBudget: budget("1536Mi"), Threads: 3, Resources: res("limits", "4Gi", "4")}},
		{name: "strict-ignores-max-rejects", loader: rdfv1.LoaderSpec{OnError: rdfv1.OnErrorStrict, MaxRejects: ptr.To(int64(5))}},
		{name: "skip-default-limit", loader: rdfv1.LoaderSpec{OnError: rdfv1.OnErrorSkip}},
		{name: "skip-no-rejects-allowed", loader: rdfv1.LoaderSpec{OnError: rdfv1.OnErrorSkip, MaxRejects: ptr.To(int64(0))}},
		{name: "large-node", loader: rdfv1.LoaderSpec{MemoryBudget: budget("180Gi"), OnError: rdfv1.OnErrorSkip, MaxRejects: ptr.To(int64(10000)), Resources: res("limits", "240Gi", "32")}},
		{name: "terabyte-budget", loader: rdfv1.LoaderSpec{MemoryBudget: budget("2Ti"), Threads: 64}},
		{name: "metrics-linger", loader: rdfv1.LoaderSpec{Resources: res("limits", "512Mi", "1")}, linger: 8 * time.Second},
		{name: "skip-plan-check", loader: rdfv1.LoaderSpec{SkipPlanCheck: true, Resources: res("limits", "2Gi", "1")}},
		{name: "metrics-linger-fraction", linger: 1500 * time.Millisecond},
		{name: "jena-5", jena: rdfv1.Jena5},
		{name: "jena-6", jena: rdfv1.Jena6, loader: rdfv1.LoaderSpec{OnError: rdfv1.OnErrorSkip}},
	}
}

// loaderArgsCases computes the golden file's lines from the current LoaderArgs.
func loaderArgsCases() []loaderArgsCase {
	var cases []loaderArgsCase
	for _, m := range loaderArgsMatrix() {
		bl := testBulkLoad()
		m.loader.Image = bl.Spec.Loader.Image
		bl.Spec.Loader = m.loader
		bl.Spec.Database.Jena = m.jena
		l := &bl.Spec.Loader
		want := loaderArgsExpect{
			Loc: DatabasePath, Tmpdir: LoaderTmpPath,
			MemoryBytes: l.EffectiveMemoryBudget(), Threads: l.EffectiveThreads(), OnError: string(l.EffectiveOnError()),
			Report: ReportPath, Summary: SummaryPath, SourceReport: FetchReportPath, MetricsAddr: stepMetricsAddr,
			MetricsLingerSeconds: m.linger.Seconds(), Inputs: []string{InputPath}, SkipPlanCheck: l.SkipPlanCheck,
			Jena: string(bl.Spec.Database.EffectiveJena()),
		}
		if l.EffectiveOnError() == rdfv1.OnErrorSkip {
			want.MaxRejects, want.Rejects = l.MaxRejects, ptr.To(RejectsPath)
		}
		cases = append(cases, loaderArgsCase{Name: m.name, Expect: want, Args: LoaderArgs(bl, m.linger)})
	}
	return cases
}

func encodeLoaderArgsCases(cases []loaderArgsCase) []byte {
	var buf bytes.Buffer
	for _, c := range cases {
		line, err := json.Marshal(c)
		if err != nil {
			panic(err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

func TestLoaderArgsGolden(t *testing.T) {
	checkGoldenLines(t, LoaderArgsGoldenPath, encodeLoaderArgsCases(loaderArgsCases()), "the load step's command line changed: "+
		"if the change is meant, run `make generate-loader-args`, check that the loader still reads it "+
		"(cargo test -p rdf-bulkload --bin rdf-bulkload loader_args) and commit the file")
}
