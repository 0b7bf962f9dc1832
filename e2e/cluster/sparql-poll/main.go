// Command sparql-poll is the cluster suite's SPARQL client: run as a pod, it sends one query
// through a Service every interval and prints one JSON line per answer, so that the suite can
// see which database answered when, and how long nothing answered, while a handoff swaps the
// serving pods. Requests start on schedule whether or not earlier ones have answered (one slow
// request does not hide the answers of the others), each on a new connection: the Service's
// choice of pod is what is measured, not one kept-alive connection to a pod that is going away.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// Sample is one request: when it was sent, how long it took, and the first binding's value of
// the answer (or the error).
type Sample struct {
	UnixMilli int64  `json:"t"`
	Millis    int64  `json:"ms"`
	Status    int    `json:"status,omitempty"`
	Value     string `json:"value,omitempty"`
	Error     string `json:"error,omitempty"`
}

func main() {
	endpoint := flag.String("endpoint", "", "SPARQL query endpoint URL, e.g. http://fuseki:3030/ds/sparql")
	query := flag.String("query", "", "a SELECT query with one variable in its first binding")
	interval := flag.Duration("interval", 100*time.Millisecond, "time between two requests")
	timeout := flag.Duration("timeout", 2*time.Second, "timeout of one request")
	flag.Parse()
	if *endpoint == "" || *query == "" {
		fmt.Fprintln(os.Stderr, "usage: sparql-poll --endpoint URL --query Q [--interval D] [--timeout D]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	client := &http.Client{Timeout: *timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	samples := make(chan Sample, 64)
	go func() {
		enc := json.NewEncoder(os.Stdout)
		for s := range samples {
			_ = enc.Encode(s)
		}
	}()
	tick := time.NewTicker(*interval)
	defer tick.Stop()
	for {
		go func() { samples <- ask(ctx, client, *endpoint, *query) }()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func ask(ctx context.Context, c *http.Client, endpoint, query string) (s Sample) {
	start := time.Now()
	s.UnixMilli = start.UnixMilli()
	defer func() { s.Millis = time.Since(start).Milliseconds() }()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(url.Values{"query": {query}}.Encode()))
	if err != nil {
		s.Error = err.Error()
		return s
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/sparql-results+json")
	resp, err := c.Do(req)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	defer resp.Body.Close()
	s.Status = resp.StatusCode
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		s.Error = err.Error()
		return s
	}
	if resp.StatusCode != http.StatusOK {
		s.Error = strings.TrimSpace(string(body))
		return s
	}
	var r struct {
		Results struct {
			Bindings []map[string]struct {
				Value string `json:"value"`
			} `json:"bindings"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		s.Error = "not SPARQL JSON results: " + err.Error()
		return s
	}
	for _, b := range r.Results.Bindings {
		for _, v := range b {
			s.Value = v.Value
			return s
		}
	}
	s.Value = "" // an answer with no binding: the database has no such triple
	return s
}
