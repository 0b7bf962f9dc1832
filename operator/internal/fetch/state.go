package fetch

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// StateDirName is the hidden directory below the destination that holds partial files, their
// sidecar state and records of verified objects while a fetch is incomplete. Nothing in it
// looks like a complete object: partial data lives in "<path>.part" files there, and an
// object reaches its final path only by a rename after verification. A successful fetch
// removes the directory (its report then records the verified objects for a rerun).
const StateDirName = ".rdf-bulkload-fetch"

// partState is the sidecar of a partial object: which parts are on disk (fsynced).
type partState struct {
	Key      string `json:"key"`
	Size     int64  `json:"size"`
	ETag     string `json:"etag"`
	PartSize int64  `json:"partSize"`
	// Done has one '1' or '0' per part.
	Done string `json:"done"`
}

// doneRecord says an object at its final path was verified, and how.
type doneRecord struct {
	Key        string `json:"key"`
	Size       int64  `json:"size"`
	ETag       string `json:"etag"`
	SHA256     string `json:"sha256"`
	MD5        string `json:"md5"`
	VerifiedBy string `json:"verifiedBy"`
	Expected   string `json:"expected,omitempty"`
}

type layout struct{ dest string }

func (l layout) final(rel string) string { return filepath.Join(l.dest, filepath.FromSlash(rel)) }
func (l layout) part(rel string) string {
	return filepath.Join(l.dest, StateDirName, "parts", filepath.FromSlash(rel)+".part")
}
func (l layout) partState(rel string) string {
	return filepath.Join(l.dest, StateDirName, "parts", filepath.FromSlash(rel)+".state")
}
func (l layout) done(rel string) string {
	return filepath.Join(l.dest, StateDirName, "done", filepath.FromSlash(rel)+".json")
}
func (l layout) doneDir() string { return filepath.Join(l.dest, StateDirName, "done") }

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// writeJSONAtomic writes v to path through a temporary file, fsync and rename.
func writeJSONAtomic(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// freeSpace is the space available to an unprivileged writer on the filesystem holding dir.
func freeSpace(dir string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// allocated is how many bytes a file occupies on disk (0 when absent).
func allocated(path string) int64 {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0
	}
	return st.Blocks * 512
}

// preallocate reserves size bytes for f, so that running out of space shows up at once and
// not half-way through a large object. Filesystems without fallocate get a sparse file.
func preallocate(f *os.File, size int64) error {
	if size == 0 {
		return nil
	}
	err := unix.Fallocate(int(f.Fd()), 0, 0, size)
	if err == nil {
		return nil
	}
	if errors.Is(err, unix.ENOSPC) {
		return err
	}
	return f.Truncate(size)
}

func isNoSpace(err error) bool {
	return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT)
}

func doneString(done []bool) string {
	var b strings.Builder
	for _, d := range done {
		if d {
			b.WriteByte('1')
		} else {
			b.WriteByte('0')
		}
	}
	return b.String()
}

func parseDone(s string, n int) ([]bool, error) {
	if len(s) != n {
		return nil, fmt.Errorf("state has %d parts, want %d", len(s), n)
	}
	out := make([]bool, n)
	for i := range s {
		out[i] = s[i] == '1'
	}
	return out, nil
}
