package controller

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// capturedLogs records every line the controllers log (any verbosity), besides what the
// suite's zap logger prints, so tests can check which decisions were logged.
var capturedLogs = &logCapture{}

type logLine struct {
	level  int
	msg    string
	values map[string]any
}

type logCapture struct {
	mu    sync.Mutex
	lines []logLine
}

// of returns the lines logged with the object's key, as controller-runtime puts it on
// the reconcile's logger (namespace, name).
func (c *logCapture) of(key client.ObjectKey) []logLine {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []logLine
	for _, l := range c.lines {
		if l.values["namespace"] == key.Namespace && l.values["name"] == key.Name {
			out = append(out, l)
		}
	}
	return out
}

// captureSink passes each line to next (when next logs that level) and records it.
type captureSink struct {
	next   logr.LogSink
	values []any
	into   *logCapture
}

func (s *captureSink) Init(info logr.RuntimeInfo) { s.next.Init(info) }
func (s *captureSink) Enabled(int) bool           { return true }

func (s *captureSink) Info(level int, msg string, kv ...any) {
	s.record(level, msg, kv)
	if s.next.Enabled(level) {
		s.next.Info(level, msg, kv...)
	}
}

func (s *captureSink) Error(err error, msg string, kv ...any) {
	s.record(0, msg, append(kv, "error", err))
	s.next.Error(err, msg, kv...)
}

func (s *captureSink) WithValues(kv ...any) logr.LogSink {
	return &captureSink{next: s.next.WithValues(kv...), values: append(slices.Clip(s.values), kv...), into: s.into}
}

func (s *captureSink) WithName(name string) logr.LogSink {
	return &captureSink{next: s.next.WithName(name), values: s.values, into: s.into}
}

func (s *captureSink) record(level int, msg string, kv []any) {
	values := map[string]any{}
	all := append(slices.Clip(s.values), kv...)
	for i := 0; i+1 < len(all); i += 2 {
		values[fmt.Sprint(all[i])] = all[i+1]
	}
	s.into.mu.Lock()
	defer s.into.mu.Unlock()
	s.into.lines = append(s.into.lines, logLine{level: level, msg: msg, values: values})
}

// The reconciler logs its decisions about one BulkLoad with its key: a build started, a
// workflow created, the snapshot taken and the build recorded, the handoff, the pruning
// of the build volumes; routine waiting only at V(1).
func TestReconcilerLogsDecisionsWithTheObjectsKey(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	g.Expect(k8s.Create(ctx, newServingDeployment(ns))).To(Succeed())
	rolloutControllerStandIn{t: t}.completeEvery(ns)
	bl := newBulkLoad(ns, "logged")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	completeBuild(t, key)

	infos := func(g Gomega) map[string]logLine {
		out := map[string]logLine{}
		for _, l := range capturedLogs.of(key) {
			if l.level == 0 {
				out[l.msg] = l
			}
		}
		return out
	}
	eventually(t, func(g Gomega) {
		got := infos(g)
		for _, msg := range []string{"starting a build", "created the build workflow", "snapshot taken of the database volume",
			"build succeeded: snapshot ready", "handed the database to the serving workload", "pruned"} {
			g.Expect(got).To(HaveKey(msg), "decision %q not logged at Info with the BulkLoad's key", msg)
		}
		g.Expect(got["starting a build"].values).To(HaveKey("revision"))
		// The workload is named by its own key: "name" is the BulkLoad's.
		g.Expect(got["handed the database to the serving workload"].values).To(HaveKeyWithValue("workload", "fuseki"))
		g.Expect(got["pruned"].values).To(HaveKeyWithValue("kind", "PersistentVolumeClaim"))
	})
	var routine []string
	for _, l := range capturedLogs.of(key) {
		if l.level > 0 {
			routine = append(routine, l.msg)
		}
	}
	g.Expect(routine).To(ContainElement("waiting for the snapshot to be ready to use"), "routine waiting is logged at V(1)")
}
