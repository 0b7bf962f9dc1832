package specs

import (
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
)

// FuzzWorkflowFromSpec builds workflows from arbitrary loader settings and source
// strings: the build never panics, stays non-root, passes credentials only by
// reference and hands the loader a memory budget below its memory limit.
func FuzzWorkflowFromSpec(f *testing.F) {
	f.Add(int64(8<<30), int64(10<<30), int64(4000), int32(0), "skip", int64(5), "wd/", "*.nt.gz")
	f.Add(int64(0), int64(0), int64(0), int32(3), "strict", int64(-1), "", "")
	f.Add(int64(1), int64(64<<20), int64(1), int32(1024), "bogus", int64(0), "a b;rm -rf /", "$(x)")
	f.Fuzz(func(t *testing.T, budget, limit, cpuMilli int64, threads int32, onError string, maxRejects int64, prefix, include string) {
		bl := testBulkLoad()
		l := &bl.Spec.Loader
		l.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{}, Requests: corev1.ResourceList{}}
		if limit > 0 {
			l.Resources.Limits[corev1.ResourceMemory] = *resource.NewQuantity(limit, resource.BinarySI)
		}
		if cpuMilli > 0 {
			l.Resources.Requests[corev1.ResourceCPU] = *resource.NewMilliQuantity(cpuMilli, resource.DecimalSI)
		}
		if budget != 0 {
			l.MemoryBudget = resource.NewQuantity(budget, resource.BinarySI)
		}
		l.Threads, l.OnError = threads, rdfv1.BadInputPolicy(onError)
		if maxRejects >= 0 {
			l.MaxRejects = ptr.To(maxRejects)
		}
		bl.Spec.Source.Prefix, bl.Spec.Source.Include = prefix, []string{include}

		wf := Workflow(bl, BuildParams{Revision: prefix + include, Attempt: 1, Images: Images{Fetch: "f", Loader: "l", Validate: "v"}})
		args := LoaderArgs(bl, 0)
		memory := argAfter(args, "--memory")
		q, err := resource.ParseQuantity(strings.TrimSuffix(strings.Replace(memory, "iB", "i", 1), "B"))
		if err != nil {
			t.Fatalf("--memory %q is not a size: %v", memory, err)
		}
		if q.Value() < rdfv1.MinimumMemoryBudget {
			t.Fatalf("budget %s below the minimum", memory)
		}
		if limit > rdfv1.MinimumMemoryBudget*4/3+1 && q.Value() >= limit {
			t.Fatalf("budget %s not below the limit %d", memory, limit)
		}
		if th := argAfter(args, "--threads"); th == "" || th == "0" || strings.HasPrefix(th, "-") {
			t.Fatalf("--threads %q", th)
		}
		if p := argAfter(args, "--on-error"); p != "strict" && p != "skip" {
			t.Fatalf("--on-error %q", p)
		}
		// Argo's own containers get the restricted security context; the attempt is bounded.
		if wf.Spec.PodSpecPatch != ExecutorPodSpecPatch() || wf.Spec.ActiveDeadlineSeconds == nil || *wf.Spec.ActiveDeadlineSeconds < 60 {
			t.Fatalf("podSpecPatch %q, activeDeadlineSeconds %v", wf.Spec.PodSpecPatch, wf.Spec.ActiveDeadlineSeconds)
		}
		for _, tp := range wf.Spec.Templates {
			if tp.Container == nil {
				continue
			}
			if !*tp.Container.SecurityContext.RunAsNonRoot || !*tp.Container.SecurityContext.ReadOnlyRootFilesystem {
				t.Fatalf("%s runs without the restricted security context", tp.Name)
			}
			for _, e := range tp.Container.Env {
				if e.Value != "" {
					t.Fatalf("%s: env %s has an inline value", tp.Name, e.Name)
				}
			}
		}
		// The load step runs the loader without a shell, with arguments the operator makes:
		// paths, numbers, enum values, an address. User strings only reach fetch.
		for _, tp := range wf.Spec.Templates {
			if tp.Name != StepLoad {
				continue
			}
			if len(tp.Container.Command) != 1 || tp.Container.Command[0] != "rdf-bulkload" {
				t.Fatalf("load step must run the loader without a shell: %q", tp.Container.Command)
			}
			for _, word := range tp.Container.Args {
				if !plainArg.MatchString(word) {
					t.Fatalf("load argument %q is not a plain path, number, enum value or address", word)
				}
			}
		}
	})
}

var plainArg = regexp.MustCompile(`^[A-Za-z0-9/._:-]+$`)

func argAfter(args []string, flag string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			return args[i+1]
		}
	}
	return ""
}
