package source

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/minio/minio-go/v7"
)

// Dated dump sets. Publishers ship each dump into a new dated directory
// (wikidata/20261120/, uniprot/2026_05/) with a completion marker or manifest inside it.
// A Spec may say so with one "*" path segment in its prefix, repeated in its marker or
// manifest key:
//
//	prefix: wikidata/*/   marker: wikidata/*/_SUCCESS
//
// Such a spec means "the newest complete one": the greatest directory name (in byte order,
// which is date order for the usual YYYYMMDD, YYYY-MM-DD and YYYY_MM names) whose marker or
// manifest exists. Directories without it are ignored, so a half-uploaded newer dump never
// shadows the last complete one.

// IsDated reports whether the spec selects the newest of dated directories.
func (s Spec) IsDated() bool { return strings.Contains(s.Prefix, "*") }

func (s Spec) validateDated() error {
	if !s.IsDated() {
		return nil
	}
	segs := strings.Split(s.Prefix, "/")
	star := -1
	for i, seg := range segs {
		if strings.Contains(seg, "*") {
			if seg != "*" || star >= 0 {
				return fmt.Errorf("prefix %q: a dated prefix has exactly one path segment that is just \"*\"", s.Prefix)
			}
			star = i
		}
	}
	if star == len(segs)-1 {
		return fmt.Errorf("prefix %q: the \"*\" segment must be followed by \"/\"", s.Prefix)
	}
	parent := strings.Join(segs[:star], "/") + "/"
	if star == 0 {
		parent = ""
	}
	completion := s.Marker + s.Manifest
	if !strings.HasPrefix(completion, parent+"*/") {
		return fmt.Errorf("dated prefix %q needs its marker or manifest inside the dated directory, e.g. %s*/_SUCCESS", s.Prefix, parent)
	}
	if strings.Count(completion, "*") != 1 {
		return fmt.Errorf("marker/manifest %q: only the dated directory segment may be \"*\"", completion)
	}
	for _, k := range s.Keys {
		if strings.Contains(k, "*") {
			return fmt.Errorf("key %q: keys cannot be dated", k)
		}
	}
	return nil
}

// datedParent splits a dated prefix into the listing parent ("wikidata/") and the rest after
// the "*" segment ("" or "rdf/").
func (s Spec) datedParent() (parent, rest string) {
	i := strings.Index(s.Prefix, "*/")
	return s.Prefix[:i], s.Prefix[i+2:]
}

// WithDirectory replaces the "*" segment by dir in the prefix, marker and manifest.
func (s Spec) WithDirectory(dir string) Spec {
	c := s
	c.Prefix = strings.Replace(s.Prefix, "*", dir, 1)
	c.Marker = strings.Replace(s.Marker, "*", dir, 1)
	c.Manifest = strings.Replace(s.Manifest, "*", dir, 1)
	return c
}

// Concrete turns a dated spec into the spec of its newest complete directory (a spec that is
// not dated is returned as is). ok is false when no directory is complete yet.
func Concrete(ctx context.Context, c *minio.Client, s Spec) (concrete Spec, ok bool, err error) {
	if !s.IsDated() {
		return s, true, nil
	}
	parent, _ := s.datedParent()
	var dirs []string
	for info := range c.ListObjects(ctx, s.Bucket, minio.ListObjectsOptions{Prefix: parent, Recursive: false}) {
		if info.Err != nil {
			return s, false, fmt.Errorf("listing s3 bucket %q prefix %q: %w", s.Bucket, parent, info.Err)
		}
		if name := strings.TrimPrefix(info.Key, parent); strings.HasSuffix(name, "/") && len(name) > 1 {
			dirs = append(dirs, strings.TrimSuffix(name, "/"))
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		cand := s.WithDirectory(d)
		key := cand.MarkerKey()
		if key == "" {
			key = cand.ManifestKey()
		}
		if _, err := c.StatObject(ctx, s.Bucket, key, minio.StatObjectOptions{}); err == nil {
			return cand, true, nil
		} else if Classify(err) != Missing {
			return s, false, fmt.Errorf("stat s3 object %s: %w", key, err)
		}
	}
	return s, false, nil
}
