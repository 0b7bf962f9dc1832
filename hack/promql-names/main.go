// Command promql-names parses every PromQL expression of Prometheus rule files (or
// PrometheusRule objects) and Grafana dashboards with Prometheus' own parser, and prints the
// metric names they use, one per line. With --scrape it also checks that every name is served:
// each given file (a /metrics scrape in the text format) contributes the sample names it holds.
//
// Usage: promql-names [--rules FILE]... [--dashboard FILE]... [--scrape FILE]...
// Exit 0: everything parses (and, with --scrape, every name was scraped); 1: a parse error or
// a name no scrape has (each reported on stderr); 2: usage or unreadable input.
//
// Grafana's variables are replaced before parsing: $__rate_interval, $__interval and $__range by
// 5m, any other $var or ${var} by "x" (they appear in label matchers only).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

type files []string

func (f *files) String() string     { return strings.Join(*f, ",") }
func (f *files) Set(v string) error { *f = append(*f, v); return nil }

// expr is one expression and where it comes from, for messages.
type expr struct{ where, text string }

func main() {
	var rules, dashboards, scrapes files
	flag.Var(&rules, "rules", "Prometheus rule file or PrometheusRule object (YAML; several documents allowed)")
	flag.Var(&dashboards, "dashboard", "Grafana dashboard JSON")
	flag.Var(&scrapes, "scrape", "text exposition of a scrape: every used name must be in one of them")
	flag.Parse()
	if flag.NArg() > 0 || len(rules)+len(dashboards) == 0 {
		fmt.Fprintln(os.Stderr, "usage: promql-names [--rules FILE]... [--dashboard FILE]... [--scrape FILE]...")
		os.Exit(2)
	}
	var exprs []expr
	for _, f := range rules {
		e, err := ruleExprs(f)
		if err != nil {
			fatal(err)
		}
		exprs = append(exprs, e...)
	}
	for _, f := range dashboards {
		e, err := dashboardExprs(f)
		if err != nil {
			fatal(err)
		}
		exprs = append(exprs, e...)
	}
	if len(exprs) == 0 {
		fatal(fmt.Errorf("no expressions found in %v %v", rules, dashboards))
	}
	p := parser.NewParser(parser.Options{})
	used := map[string][]string{} // name -> where
	failed := false
	for _, e := range exprs {
		node, err := p.ParseExpr(e.text)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n  in: %s\n", e.where, err, e.text)
			failed = true
			continue
		}
		parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
			if vs, ok := n.(*parser.VectorSelector); ok {
				name := vs.Name
				for _, m := range vs.LabelMatchers {
					if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
						name = m.Value
					}
				}
				if name == "" {
					fmt.Fprintf(os.Stderr, "%s: a selector without a metric name: %s\n", e.where, vs)
					failed = true
				} else {
					used[name] = append(used[name], e.where)
				}
			}
			return nil
		})
	}
	names := make([]string, 0, len(used))
	for n := range used {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Println(n)
	}
	if len(scrapes) > 0 {
		served := map[string]bool{}
		for _, f := range scrapes {
			if err := sampleNames(f, served); err != nil {
				fatal(err)
			}
		}
		for _, n := range names {
			if !served[n] {
				fmt.Fprintf(os.Stderr, "%s is used by %s but served by none of %v\n", n, strings.Join(used[n], ", "), scrapes)
				failed = true
			}
		}
	}
	if failed {
		os.Exit(1)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "promql-names:", err)
	os.Exit(2)
}

// ruleExprs reads rule groups from a rule file ({groups: ...}) or PrometheusRule objects
// ({kind: PrometheusRule, spec: {groups: ...}}), one or more YAML documents.
func ruleExprs(path string) ([]expr, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type rule struct {
		Record string `yaml:"record"`
		Alert  string `yaml:"alert"`
		Expr   string `yaml:"expr"`
	}
	type groups struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []rule `yaml:"rules"`
		} `yaml:"groups"`
	}
	var out []expr
	dec := yaml.NewDecoder(f)
	for {
		var doc struct {
			Kind   string `yaml:"kind"`
			groups `yaml:",inline"`
			Spec   groups `yaml:"spec"`
		}
		if err := dec.Decode(&doc); err != nil {
			if err.Error() == "EOF" {
				break
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		gs := doc.Groups
		if doc.Kind != "" {
			if doc.Kind != "PrometheusRule" {
				continue
			}
			gs = doc.Spec.Groups
		}
		for _, g := range gs {
			for _, r := range g.Rules {
				name := r.Alert + r.Record
				out = append(out, expr{where: fmt.Sprintf("%s: group %s, rule %s", path, g.Name, name), text: r.Expr})
			}
		}
	}
	return out, nil
}

var (
	grafanaDuration = regexp.MustCompile(`\$(__rate_interval|__interval|__range)\b|\$\{(__rate_interval|__interval|__range)\}`)
	grafanaVar      = regexp.MustCompile(`\$\{\w+\}|\$\w+`)
	labelValues     = regexp.MustCompile(`^\s*label_values\((.*),\s*\w+\s*\)\s*$`)
)

// dashboardExprs collects the "expr" of every panel target and the selector of every
// label_values() variable query, anywhere in the dashboard (rows nest panels).
func dashboardExprs(path string) ([]expr, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []expr
	add := func(where, s string) {
		s = grafanaDuration.ReplaceAllString(s, "5m")
		s = grafanaVar.ReplaceAllString(s, "x")
		out = append(out, expr{where: path + ": " + where, text: s})
	}
	var walk func(v any, where string)
	walk = func(v any, where string) {
		switch v := v.(type) {
		case map[string]any:
			if t, ok := v["title"].(string); ok {
				where = "panel " + strings.TrimSpace(t)
			}
			if n, ok := v["name"].(string); ok && v["type"] == "query" {
				where = "variable " + n
				if q, ok := v["query"].(map[string]any); ok {
					if s, ok := q["query"].(string); ok {
						if m := labelValues.FindStringSubmatch(s); m != nil {
							add(where, m[1])
						}
					}
				} else if s, ok := v["query"].(string); ok {
					if m := labelValues.FindStringSubmatch(s); m != nil {
						add(where, m[1])
					}
				}
			}
			if s, ok := v["expr"].(string); ok {
				add(where, s)
			}
			for k, c := range v {
				if k != "query" {
					walk(c, where)
				}
			}
		case []any:
			for _, c := range v {
				walk(c, where)
			}
		}
	}
	walk(doc, "dashboard")
	return out, nil
}

// sampleNames adds the sample names of a text-format scrape (name up to '{' or a blank).
func sampleNames(path string, into map[string]bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			into[line[:i]] = true
			n++
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: no samples (not a scrape?)", path)
	}
	return nil
}
