package main

import (
	"io"
	"sync"
)

// lockedWriter serializes whole lines onto stderr: the CLI's and fetch.Run's event logs
// share it, each line one Write.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
