package v1alpha1

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Values used when neither the spec nor the server-side defaults say otherwise
// (objects built in Go, e.g. in tests, skip the API server's defaulting).
const (
	DefaultMemoryBudget  = 2 << 30 // bytes
	MinimumMemoryBudget  = 64 << 20
	DefaultThreads       = 2
	DefaultSnapshotKeep  = 2
	DefaultRetryLimit    = 3
	DefaultBuildAttempts = 3
	DefaultBackoff       = 30 * time.Second
	DefaultMaxBackoff    = 10 * time.Minute
	DefaultInterval      = 5 * time.Minute
	DefaultSettlePeriod  = 2 * time.Minute
	DefaultBuildDeadline = 24 * time.Hour
	DefaultSnapshotReady = 6 * time.Hour
	// DefaultKeepFailedVolumesFor keeps a failed build's volumes for a working day's fix.
	DefaultKeepFailedVolumesFor = 24 * time.Hour
	// DefaultNodeLossGracePeriod matches Kubernetes' default eviction of pods from an
	// unreachable node (tolerationSeconds 300).
	DefaultNodeLossGracePeriod = 5 * time.Minute
	MinimumBuildDeadline       = time.Minute
)

// DefaultFetchResources are the fetch container's resources when the spec names none:
// requests that tell the scheduler what the step uses, and a memory limit.
func DefaultFetchResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("250m"),
			corev1.ResourceMemory: resource.MustParse("256Mi"),
		},
		Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
	}
}

// EffectiveResources are the fetch container's resources: the spec's, else DefaultFetchResources.
func (f *FetchSpec) EffectiveResources() corev1.ResourceRequirements {
	if len(f.Resources.Requests) == 0 && len(f.Resources.Limits) == 0 && len(f.Resources.Claims) == 0 {
		return DefaultFetchResources()
	}
	return *f.Resources.DeepCopy()
}

// EffectiveDeadline bounds one build attempt: the spec's deadline, else
// DefaultBuildDeadline, never below MinimumBuildDeadline.
func (b *BuildSpec) EffectiveDeadline() time.Duration {
	if b.Deadline == nil || b.Deadline.Duration <= 0 {
		return DefaultBuildDeadline
	}
	return max(b.Deadline.Duration, MinimumBuildDeadline)
}

// EffectiveMemoryBudget is the loader's memory budget in bytes: the spec's value, else
// three quarters of the memory limit (or request), else DefaultMemoryBudget. It is
// never below MinimumMemoryBudget and, when a limit is set, stays below it.
func (l *LoaderSpec) EffectiveMemoryBudget() int64 {
	limit := memoryOf(l.Resources.Limits)
	var budget int64
	switch {
	case l.MemoryBudget != nil && l.MemoryBudget.Value() > 0:
		budget = l.MemoryBudget.Value()
	case limit > 0:
		budget = limit / 4 * 3
	case memoryOf(l.Resources.Requests) > 0:
		budget = memoryOf(l.Resources.Requests) / 4 * 3
	default:
		budget = DefaultMemoryBudget
	}
	// The schema rejects a budget at or above the limit; objects that skipped
	// admission still get one that leaves the loader headroom.
	if limit > 0 && budget >= limit {
		budget = limit / 4 * 3
	}
	if budget < MinimumMemoryBudget {
		budget = MinimumMemoryBudget
	}
	return budget
}

// EffectiveThreads is the loader's parallelism: the spec's value, else the CPU limit
// (or request) rounded up, else DefaultThreads.
func (l *LoaderSpec) EffectiveThreads() int32 {
	if l.Threads > 0 {
		return min(l.Threads, 1024)
	}
	for _, list := range []corev1.ResourceList{l.Resources.Limits, l.Resources.Requests} {
		if q, ok := list[corev1.ResourceCPU]; ok && q.Sign() > 0 {
			milli := q.MilliValue()
			n := (milli + 999) / 1000
			if n > 1024 {
				n = 1024
			}
			return int32(n)
		}
	}
	return DefaultThreads
}

// EffectiveOnError is the bad-input policy, strict unless skip is asked for.
func (l *LoaderSpec) EffectiveOnError() BadInputPolicy {
	if l.OnError == OnErrorSkip {
		return OnErrorSkip
	}
	return OnErrorStrict
}

// EffectiveJena is the Jena release the database is built for: 5 unless 6 is asked for.
func (d *DatabaseSpec) EffectiveJena() JenaRelease {
	if d.Jena == Jena6 {
		return Jena6
	}
	return Jena5
}

// EffectiveScratchSize is the scratch volume size, database.size unless set.
func (d *DatabaseSpec) EffectiveScratchSize() resource.Quantity {
	if d.ScratchSize != nil && d.ScratchSize.Sign() > 0 {
		return d.ScratchSize.DeepCopy()
	}
	return d.Size.DeepCopy()
}

// EffectiveReadyTimeout is how long a snapshot may take to become readyToUse.
func (s *SnapshotSpec) EffectiveReadyTimeout() time.Duration {
	if s.ReadyTimeout.Duration <= 0 {
		return DefaultSnapshotReady
	}
	return s.ReadyTimeout.Duration
}

// EffectiveKeep is the number of snapshots retained, never below 2 (current + rollback).
func (s *SnapshotSpec) EffectiveKeep() int {
	if s.Keep < DefaultSnapshotKeep {
		return DefaultSnapshotKeep
	}
	return int(s.Keep)
}

// EffectiveBuildAttempts is how many workflows one revision may use.
func (r *RetrySpec) EffectiveBuildAttempts() int32 {
	if r.BuildAttempts < 1 {
		return DefaultBuildAttempts
	}
	return r.BuildAttempts
}

// BackoffFor is the wait before retry number n (1 = first retry): backoff doubled
// per retry, capped at maxBackoff.
func (r *RetrySpec) BackoffFor(n int32) time.Duration {
	base, limit := r.Backoff.Duration, r.MaxBackoff.Duration
	if base <= 0 {
		base = DefaultBackoff
	}
	if limit <= 0 {
		limit = DefaultMaxBackoff
	}
	if limit < base {
		limit = base
	}
	d := base
	for i := int32(1); i < n; i++ {
		d *= 2
		if d >= limit {
			return limit
		}
	}
	return d
}

// EffectiveInterval is the watch poll interval.
func (t *TriggerSpec) EffectiveInterval() time.Duration {
	if t.Interval.Duration <= 0 {
		return DefaultInterval
	}
	return t.Interval.Duration
}

func memoryOf(list corev1.ResourceList) int64 {
	if q, ok := list[corev1.ResourceMemory]; ok {
		return q.Value()
	}
	return 0
}

// EffectiveKeepFailedVolumesFor is how long a failed build's resumable volumes are kept.
func (r *RetrySpec) EffectiveKeepFailedVolumesFor() time.Duration {
	if r.KeepFailedVolumesFor == nil || r.KeepFailedVolumesFor.Duration < 0 {
		return DefaultKeepFailedVolumesFor
	}
	return r.KeepFailedVolumesFor.Duration
}

// EffectiveNodeLossGracePeriod is how long a node may be NotReady before it is given up.
func (b *BuildSpec) EffectiveNodeLossGracePeriod() time.Duration {
	if b.NodeLossGracePeriod == nil || b.NodeLossGracePeriod.Duration <= 0 {
		return DefaultNodeLossGracePeriod
	}
	return b.NodeLossGracePeriod.Duration
}

// EffectiveOnNodeLoss is the serving policy for a lost node, Wait unless Rebuild is asked for.
func (s *ServingSpec) EffectiveOnNodeLoss() NodeLossPolicy {
	if s.OnNodeLoss == NodeLossRebuild {
		return NodeLossRebuild
	}
	return NodeLossWait
}
