package main

import (
	"encoding/json"
	"io"
	"sync"
	"time"
)

// lineWriter serializes whole JSON lines onto stderr.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lineWriter) line(s string) { _, _ = l.Write([]byte(s + "\n")) }

func (l *lineWriter) errorLine(code int, msg string) {
	b, _ := json.Marshal(map[string]any{"ts": time.Now().UTC().Format(time.RFC3339Nano), "event": "error",
		"exit_code": code, "error": msg})
	l.line(string(b))
}
