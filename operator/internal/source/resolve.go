package source

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
)

// MaxManifestSize bounds how much of a manifest is read into memory.
const MaxManifestSize = 64 << 20

// Object is one object of a resolved dump set.
type Object struct {
	Key          string    `json:"key"`
	Size         int64     `json:"size"`
	ETag         string    `json:"etag"`
	LastModified time.Time `json:"lastModified"`
	// Expected is the digest from the manifest, if there is one.
	Expected *Digest `json:"expected,omitempty"`
}

// Snapshot is the state of a dump set at one listing.
type Snapshot struct {
	// Spec is the concrete spec listed (for a dated spec, the chosen directory's).
	Spec Spec
	// Complete is true when the marker or manifest is present and every object the
	// manifest names exists. Only a complete snapshot has a Revision.
	Complete bool
	// Incomplete says why the set is not complete (marker missing, object missing...).
	Incomplete string
	// Objects selected for the dump set (sorted by key). For an incomplete set it is what the
	// listing shows so far.
	Objects []Object
	// MarkerKey and ManifestKey are the full keys used.
	MarkerKey, ManifestKey string
	// Manifest is the raw manifest (when a manifest is used and present).
	Manifest []byte
	// ManifestDigest is the sha256 of the manifest bytes, hex.
	ManifestDigest string
	// Revision identifies the content of a complete dump set: "sha256:" + the digest of the
	// manifest, or of the sorted keys + sizes + ETags of the selected objects without one.
	Revision string
	// Fingerprint changes whenever anything under the listing changes (objects, marker,
	// manifest); the watcher uses it to see that uploads have gone quiet.
	Fingerprint string
	// TotalSize of the selected objects.
	TotalSize int64
}

// Resolve lists the dump set described by spec. It returns an error only for failures to
// talk to the endpoint (see Classify); an incomplete dump set is a Snapshot with Complete=false.
//
// A dated spec (see Concrete) resolves to its newest complete directory; Snapshot.Spec is
// the concrete spec used.
func Resolve(ctx context.Context, c *minio.Client, spec Spec) (*Snapshot, error) {
	if spec.IsDated() {
		concrete, ok, err := Concrete(ctx, c, spec)
		if err != nil {
			return nil, err
		}
		if !ok {
			parent, _ := spec.datedParent()
			return &Snapshot{Spec: spec, Incomplete: fmt.Sprintf("no dated directory under %s has its completion object (%s) yet",
				parent, spec.Marker+spec.Manifest), Fingerprint: "none"}, nil
		}
		spec = concrete
	}
	snap := &Snapshot{Spec: spec, MarkerKey: spec.MarkerKey(), ManifestKey: spec.ManifestKey()}
	listPrefix, doList := spec.Prefix, spec.Prefix != ""
	if !doList && snap.ManifestKey != "" {
		listPrefix, doList = dirOf(snap.ManifestKey), true
	}

	// One listing gives objects, marker and manifest presence in one view; keys, marker,
	// manifest and manifest entries outside it are stat'ed.
	listed := map[string]minio.ObjectInfo{}
	if doList {
		for info := range c.ListObjects(ctx, spec.Bucket, minio.ListObjectsOptions{Prefix: listPrefix, Recursive: true}) {
			if info.Err != nil {
				return nil, fmt.Errorf("listing s3 bucket %q prefix %q: %w", spec.Bucket, listPrefix, info.Err)
			}
			listed[info.Key] = info
		}
	}
	stat := func(key string) (bool, error) {
		if _, ok := listed[key]; ok {
			return true, nil
		}
		info, err := c.StatObject(ctx, spec.Bucket, key, minio.StatObjectOptions{})
		if err != nil {
			if Classify(err) == Missing {
				return false, nil
			}
			return false, fmt.Errorf("stat s3 object %s: %w", key, err)
		}
		info.Key = key
		listed[key] = info
		return true, nil
	}
	explicit := map[string]bool{}
	for _, k := range append([]string{snap.MarkerKey, snap.ManifestKey}, spec.Keys...) {
		if k = spec.ResolveKey(k); k == "" {
			continue
		}
		if _, err := stat(k); err != nil {
			return nil, err
		}
	}
	for _, k := range spec.Keys {
		explicit[spec.ResolveKey(k)] = true
	}

	toObject := func(info minio.ObjectInfo) Object {
		return Object{Key: info.Key, Size: info.Size, ETag: strings.Trim(info.ETag, `"`), LastModified: info.LastModified}
	}
	selected := map[string]Object{}
	var missing []string
	for k := range explicit {
		if info, ok := listed[k]; ok {
			selected[k] = toObject(info)
		} else {
			missing = append(missing, k)
		}
	}

	switch {
	case snap.ManifestKey != "" && !has(listed, snap.ManifestKey):
		snap.Incomplete = fmt.Sprintf("manifest %s is missing", snap.ManifestKey)
	case snap.ManifestKey != "":
		data, err := readSmall(ctx, c, spec.Bucket, snap.ManifestKey, listed[snap.ManifestKey].ETag)
		if err != nil {
			return nil, fmt.Errorf("reading manifest %s: %w", snap.ManifestKey, err)
		}
		entries, err := ParseManifest(data)
		if err != nil {
			return nil, &ManifestError{Key: snap.ManifestKey, Err: err}
		}
		snap.Manifest = data
		sum := sha256.Sum256(data)
		snap.ManifestDigest = hex.EncodeToString(sum[:])
		dir := dirOf(snap.ManifestKey)
		for _, e := range entries {
			key := dir + e.Name
			if !explicit[key] && !spec.included(key) {
				continue
			}
			ok, err := stat(key)
			if err != nil {
				return nil, err
			}
			if !ok {
				missing = append(missing, key)
				continue
			}
			d := e.Digest
			o := toObject(listed[key])
			o.Expected = &d
			selected[key] = o
		}
	default:
		if spec.Prefix != "" {
			for k, info := range listed {
				if k == snap.MarkerKey || strings.HasSuffix(k, "/") || !strings.HasPrefix(k, spec.Prefix) || !spec.included(k) {
					continue
				}
				selected[k] = toObject(info)
			}
		}
		if snap.MarkerKey != "" && !has(listed, snap.MarkerKey) {
			snap.Incomplete = fmt.Sprintf("completion marker %s is missing", snap.MarkerKey)
		}
	}
	snap.Fingerprint = fingerprint(listed)
	for _, o := range selected {
		snap.Objects = append(snap.Objects, o)
		snap.TotalSize += o.Size
	}
	sort.Slice(snap.Objects, func(i, j int) bool { return snap.Objects[i].Key < snap.Objects[j].Key })
	switch {
	case snap.Incomplete != "":
	case len(missing) > 0:
		snap.Incomplete = fmt.Sprintf("%d object(s) named by the keys or the manifest do not exist: %s", len(missing), abbreviate(missing))
	case len(snap.Objects) == 0:
		snap.Incomplete = "no object matches the prefix, keys, manifest and include patterns"
	default:
		snap.Complete = true
		if snap.ManifestKey != "" {
			snap.Revision = "sha256:" + snap.ManifestDigest
		} else {
			snap.Revision = ListingRevision(snap.Objects)
		}
	}
	return snap, nil
}

// ManifestError is a manifest that exists but cannot be parsed.
type ManifestError struct {
	Key string
	Err error
}

func (e *ManifestError) Error() string { return fmt.Sprintf("manifest %s: %v", e.Key, e.Err) }
func (e *ManifestError) Unwrap() error { return e.Err }

// ListingRevision is the revision of a dump set without a manifest: the sha256 of its sorted
// "key<TAB>size<TAB>etag" lines.
func ListingRevision(objs []Object) string {
	lines := make([]string, 0, len(objs))
	for _, o := range objs {
		lines = append(lines, fmt.Sprintf("%s\t%d\t%s\n", o.Key, o.Size, strings.Trim(o.ETag, `"`)))
	}
	sort.Strings(lines)
	h := sha256.New()
	for _, l := range lines {
		_, _ = io.WriteString(h, l) // a hash.Hash never fails to write
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func fingerprint(listed map[string]minio.ObjectInfo) string {
	objs := make([]Object, 0, len(listed))
	for _, info := range listed {
		objs = append(objs, Object{Key: info.Key, Size: info.Size, ETag: info.ETag})
	}
	return ListingRevision(objs)
}

func has(m map[string]minio.ObjectInfo, k string) bool { _, ok := m[k]; return ok }

func abbreviate(keys []string) string {
	sort.Strings(keys)
	if len(keys) > 5 {
		return strings.Join(keys[:5], ", ") + fmt.Sprintf(" and %d more", len(keys)-5)
	}
	return strings.Join(keys, ", ")
}

func readSmall(ctx context.Context, c *minio.Client, bucket, key, etag string) ([]byte, error) {
	opts := minio.GetObjectOptions{}
	if etag != "" {
		_ = opts.SetMatchETag(strings.Trim(etag, `"`))
	}
	obj, err := c.GetObject(ctx, bucket, key, opts)
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	data, err := io.ReadAll(io.LimitReader(obj, MaxManifestSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxManifestSize {
		return nil, errors.New("manifest larger than 64 MiB")
	}
	return data, nil
}
