package v1alpha1

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func q(s string) resource.Quantity { return resource.MustParse(s) }

func TestEffectiveMemoryBudget(t *testing.T) {
	for name, tc := range map[string]struct {
		spec LoaderSpec
		want int64
	}{
		"explicit":            {LoaderSpec{MemoryBudget: ptr.To(q("6Gi"))}, 6 << 30},
		"from limit":          {LoaderSpec{Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: q("16Gi")}}}, 12 << 30},
		"from request":        {LoaderSpec{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: q("8Gi")}}}, 6 << 30},
		"default":             {LoaderSpec{}, DefaultMemoryBudget},
		"above limit clamped": {LoaderSpec{MemoryBudget: ptr.To(q("32Gi")), Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: q("16Gi")}}}, 12 << 30},
		"minimum":             {LoaderSpec{MemoryBudget: ptr.To(q("1Mi"))}, MinimumMemoryBudget},
	} {
		if got := tc.spec.EffectiveMemoryBudget(); got != tc.want {
			t.Errorf("%s: %d, want %d", name, got, tc.want)
		}
	}
}

func TestEffectiveThreads(t *testing.T) {
	cpu := func(list string, v string) LoaderSpec {
		rl := corev1.ResourceList{corev1.ResourceCPU: q(v)}
		if list == "limits" {
			return LoaderSpec{Resources: corev1.ResourceRequirements{Limits: rl}}
		}
		return LoaderSpec{Resources: corev1.ResourceRequirements{Requests: rl}}
	}
	for name, tc := range map[string]struct {
		spec LoaderSpec
		want int32
	}{
		"explicit":       {LoaderSpec{Threads: 5}, 5},
		"limit rounded":  {cpu("limits", "7500m"), 8},
		"request":        {cpu("requests", "3"), 3},
		"tiny request":   {cpu("requests", "100m"), 1},
		"default":        {LoaderSpec{}, DefaultThreads},
		"huge is capped": {cpu("limits", "5000"), 1024},
	} {
		if got := tc.spec.EffectiveThreads(); got != tc.want {
			t.Errorf("%s: %d, want %d", name, got, tc.want)
		}
	}
}

func TestBackoffFor(t *testing.T) {
	r := RetrySpec{Backoff: metav1.Duration{Duration: 10 * time.Second}, MaxBackoff: metav1.Duration{Duration: time.Minute}}
	for n, want := range map[int32]time.Duration{1: 10 * time.Second, 2: 20 * time.Second, 3: 40 * time.Second, 4: time.Minute, 40: time.Minute} {
		if got := r.BackoffFor(n); got != want {
			t.Errorf("retry %d: %s, want %s", n, got, want)
		}
	}
	if got := (&RetrySpec{}).BackoffFor(1); got != DefaultBackoff {
		t.Errorf("default: %s", got)
	}
}

func TestOtherDefaults(t *testing.T) {
	d := DatabaseSpec{Size: q("10Gi")}
	if s := d.EffectiveScratchSize(); s.Cmp(q("10Gi")) != 0 {
		t.Errorf("scratch defaults to size: %s", s.String())
	}
	d.ScratchSize = ptr.To(q("30Gi"))
	if s := d.EffectiveScratchSize(); s.Cmp(q("30Gi")) != 0 {
		t.Errorf("scratch: %s", s.String())
	}
	if (&SnapshotSpec{Keep: 0}).EffectiveKeep() != 2 || (&SnapshotSpec{Keep: 5}).EffectiveKeep() != 5 {
		t.Error("keep")
	}
	if (&RetrySpec{}).EffectiveBuildAttempts() != DefaultBuildAttempts {
		t.Error("build attempts")
	}
	if (&TriggerSpec{}).EffectiveInterval() != DefaultInterval {
		t.Error("interval")
	}
	if (&LoaderSpec{OnError: "weird"}).EffectiveOnError() != OnErrorStrict {
		t.Error("unknown policies fall back to strict")
	}
	for d, want := range map[time.Duration]time.Duration{0: DefaultBuildDeadline, -time.Hour: DefaultBuildDeadline, time.Second: time.Minute, 6 * time.Hour: 6 * time.Hour} {
		if got := (&BuildSpec{Deadline: &metav1.Duration{Duration: d}}).EffectiveDeadline(); got != want {
			t.Errorf("deadline %s: %s, want %s", d, got, want)
		}
	}
	if (&BuildSpec{}).EffectiveDeadline() != DefaultBuildDeadline {
		t.Error("no deadline: the default")
	}
	if r := (&FetchSpec{}).EffectiveResources(); r.Requests.Memory().Sign() <= 0 || r.Limits.Memory().Cmp(*r.Requests.Memory()) <= 0 {
		t.Errorf("fetch defaults: requests and a memory limit above them: %+v", r)
	}
	own := FetchSpec{Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: q("4Gi")}}}
	if r := own.EffectiveResources(); r.Requests != nil || r.Limits.Memory().Cmp(q("4Gi")) != 0 {
		t.Errorf("the spec's fetch resources win whole: %+v", r)
	}
}

// FuzzLoaderDefaults checks the invariants of the loader's derived settings for
// any resources and budget: a budget of at least the minimum that stays below a
// memory limit, and 1..1024 threads.
func FuzzLoaderDefaults(f *testing.F) {
	f.Add(int64(0), int64(0), int64(0), int64(0), int32(0))
	f.Add(int64(6<<30), int64(8<<30), int64(10<<30), int64(3500), int32(0))
	f.Add(int64(1<<40), int64(1), int64(100<<20), int64(-5), int32(-3))
	f.Fuzz(func(t *testing.T, budget, request, limit, cpuMilli int64, threads int32) {
		l := LoaderSpec{Threads: threads, Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{}, Requests: corev1.ResourceList{}}}
		if budget != 0 {
			l.MemoryBudget = resource.NewQuantity(budget, resource.BinarySI)
		}
		if request > 0 {
			l.Resources.Requests[corev1.ResourceMemory] = *resource.NewQuantity(request, resource.BinarySI)
		}
		if limit > 0 {
			l.Resources.Limits[corev1.ResourceMemory] = *resource.NewQuantity(limit, resource.BinarySI)
		}
		if cpuMilli != 0 {
			l.Resources.Limits[corev1.ResourceCPU] = *resource.NewMilliQuantity(cpuMilli, resource.DecimalSI)
		}
		b := l.EffectiveMemoryBudget()
		if b < MinimumMemoryBudget {
			t.Fatalf("budget %d below the minimum", b)
		}
		if limit > MinimumMemoryBudget*2 && b >= limit {
			t.Fatalf("budget %d not below the limit %d", b, limit)
		}
		if budget >= MinimumMemoryBudget && (limit <= 0 || budget < limit) && b != budget {
			t.Fatalf("a valid explicit budget %d must be kept, got %d", budget, b)
		}
		th := l.EffectiveThreads()
		if th < 1 || th > 1024 {
			t.Fatalf("threads %d", th)
		}
		if threads > 0 && threads <= 1024 && th != threads {
			t.Fatalf("explicit threads %d not kept: %d", threads, th)
		}
	})
}
