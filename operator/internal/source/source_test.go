package source

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseManifestFormats(t *testing.T) {
	md5a, sha1b := strings.Repeat("a", 32), strings.Repeat("b", 40)
	sha256c, sha512d := strings.Repeat("c", 64), strings.Repeat("D", 128)
	data := fmt.Sprintf("# wikidata 20261120\n%s  wikidata-20261120-all.nt.gz\n%s *./sub/lexemes.nt.bz2\r\n\n"+
		"SHA256 (truthy.nt.zst) = %s\nSHA512(name with spaces.nt) = %s\n", md5a, sha1b, sha256c, sha512d)
	got, err := ParseManifest([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := []ManifestEntry{
		{"wikidata-20261120-all.nt.gz", Digest{"md5", md5a}},
		{"sub/lexemes.nt.bz2", Digest{"sha1", sha1b}},
		{"truthy.nt.zst", Digest{"sha256", sha256c}},
		{"name with spaces.nt", Digest{"sha512", strings.ToLower(sha512d)}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

func TestParseManifestRejects(t *testing.T) {
	for name, data := range map[string]string{
		"garbage line":       strings.Repeat("a", 32) + "  ok.nt\nthis is not a checksum line\n",
		"bad length":         strings.Repeat("a", 31) + "  x.nt\n",
		"not hex":            strings.Repeat("z", 32) + "  x.nt\n",
		"escape":             strings.Repeat("a", 32) + "  ../../etc/passwd\n",
		"absolute":           strings.Repeat("a", 32) + "  /etc/passwd\n",
		"empty":              "# nothing\n\n",
		"conflicting digest": strings.Repeat("a", 32) + "  x.nt\n" + strings.Repeat("b", 32) + "  x.nt\n",
		"bsd tag mismatch":   "MD5 (x.nt) = " + strings.Repeat("c", 64) + "\n",
	} {
		if _, err := ParseManifest([]byte(data)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestKeysAndLocalPaths(t *testing.T) {
	s := Spec{Prefix: "wikidata/20261120/", Marker: "wikidata/20261120/_SUCCESS"}
	if got := s.MarkerKey(); got != "wikidata/20261120/_SUCCESS" {
		t.Errorf("marker key %q", got)
	}
	if got := s.ResolveKey("/DONE"); got != "DONE" {
		t.Errorf("leading slash kept: %q", got)
	}
	for key, want := range map[string]string{
		"wikidata/20261120/a.nt.gz":     "a.nt.gz",
		"wikidata/20261120/sub/b.nt.gz": "sub/b.nt.gz",
		"other/c.nt":                    "other/c.nt",
	} {
		if got, err := s.LocalPath(key); err != nil || got != want {
			t.Errorf("LocalPath(%q) = %q, %v; want %q", key, got, err, want)
		}
	}
	for _, bad := range []string{"wikidata/20261120/../../../etc/passwd", "wikidata/20261120/", "wikidata/20261120/a/../../x", "/abs"} {
		if got, err := s.LocalPath(bad); err == nil {
			t.Errorf("LocalPath(%q) = %q, want an error", bad, got)
		}
	}
	// Without a prefix: relative to the manifest's directory, or to the keys' common directory.
	m := Spec{Manifest: "uniprot/2026_05/RELEASE.sha256"}
	if got, _ := m.LocalPath("uniprot/2026_05/core/x.rdf.xz"); got != "core/x.rdf.xz" {
		t.Errorf("manifest-relative path %q", got)
	}
	k := Spec{Keys: []string{"pubchem/rdf/compound/a.ttl.gz", "pubchem/rdf/substance/b.ttl.gz"}}
	if got, _ := k.LocalPath("pubchem/rdf/substance/b.ttl.gz"); got != "substance/b.ttl.gz" {
		t.Errorf("keys-relative path %q", got)
	}
}

func TestIncludePatterns(t *testing.T) {
	s := Spec{Prefix: "d/", Include: []string{"*.nt.gz", "sub/*.ttl"}}
	for key, want := range map[string]bool{
		"d/a.nt.gz": true, "d/x/y/b.nt.gz": true, "d/sub/c.ttl": true, "d/c.ttl": false, "d/README": false,
	} {
		if got := s.included(key); got != want {
			t.Errorf("included(%q) = %v, want %v", key, got, want)
		}
	}
	if !(Spec{Prefix: "d/"}).included("d/anything") {
		t.Error("no patterns must include everything")
	}
}

func TestListingRevision(t *testing.T) {
	a := []Object{{Key: "k1", Size: 1, ETag: `"e1"`}, {Key: "k2", Size: 2, ETag: "e2"}}
	b := []Object{{Key: "k2", Size: 2, ETag: "e2"}, {Key: "k1", Size: 1, ETag: "e1"}}
	if ListingRevision(a) != ListingRevision(b) {
		t.Error("revision depends on order or ETag quoting")
	}
	for _, changed := range [][]Object{
		{{Key: "k1", Size: 1, ETag: "e1"}, {Key: "k2", Size: 3, ETag: "e2"}},
		{{Key: "k1", Size: 1, ETag: "e1"}, {Key: "k2", Size: 2, ETag: "e3"}},
		{{Key: "k1", Size: 1, ETag: "e1"}, {Key: "k3", Size: 2, ETag: "e2"}},
		{{Key: "k1", Size: 1, ETag: "e1"}},
	} {
		if ListingRevision(changed) == ListingRevision(a) {
			t.Errorf("revision unchanged for %v", changed)
		}
	}
}

func TestValidateAndSecrets(t *testing.T) {
	ok := Spec{Endpoint: "https://s3.example.org", Bucket: "bkt", Prefix: "p/", Marker: "M"}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]Spec{
		"no marker":             {Endpoint: "https://s3", Bucket: "bkt", Prefix: "p/"},
		"both":                  {Endpoint: "https://s3", Bucket: "bkt", Prefix: "p/", Marker: "M", Manifest: "S"},
		"no bucket":             {Endpoint: "https://s3", Prefix: "p/", Marker: "M"},
		"bad scheme":            {Endpoint: "ftp://s3", Bucket: "bkt", Prefix: "p/", Marker: "M"},
		"userinfo":              {Endpoint: "https://u:secretpw@s3", Bucket: "bkt", Prefix: "p/", Marker: "M"},
		"bad glob":              {Endpoint: "https://s3", Bucket: "bkt", Prefix: "p/", Marker: "M", Include: []string{"[x"}},
		"nothing selected":      {Endpoint: "https://s3", Bucket: "bkt", Marker: "M"},
		"prefix + keys":         {Endpoint: "https://s3", Bucket: "bkt", Prefix: "p/", Keys: []string{"k"}},
		"dated, marker outside": {Endpoint: "https://s3", Bucket: "bkt", Prefix: "wd/*/", Marker: "wd/_SUCCESS"},
		"dated, partial glob":   {Endpoint: "https://s3", Bucket: "bkt", Prefix: "wd/2026*/", Marker: "wd/2026*/_SUCCESS"},
		"dated, two stars":      {Endpoint: "https://s3", Bucket: "bkt", Prefix: "*/*/", Marker: "*/*/_SUCCESS"},
	} {
		err := s.Validate()
		if err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "secretpw") {
			t.Errorf("%s: password in error %q", name, err)
		}
	}
	if err := (Spec{Endpoint: "http://s3", Bucket: "bkt", Keys: []string{"a/x.nt"}}).Validate(); err != nil {
		t.Errorf("explicit keys alone need no marker: %v", err)
	}
	dated := Spec{Endpoint: "http://s3", Bucket: "bkt", Prefix: "wd/*/rdf/", Manifest: "wd/*/SHA256SUMS"}
	if err := dated.Validate(); err != nil {
		t.Errorf("dated spec: %v", err)
	}
	if c := dated.WithDirectory("20261120"); c.Prefix != "wd/20261120/rdf/" || c.ManifestKey() != "wd/20261120/SHA256SUMS" || c.IsDated() {
		t.Errorf("concrete dated spec: %+v", c)
	}
	c := Credentials{AccessKeyID: "AKIA1", SecretAccessKey: "topsecret", SessionToken: "tokentoken"}
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s", c, c, c, c)} {
		if strings.Contains(s, "topsecret") || strings.Contains(s, "tokentoken") {
			t.Errorf("credentials formatted with their secret: %s", s)
		}
	}
	if got := c.Redact("x topsecret y tokentoken"); got != "x *** y ***" {
		t.Errorf("redact: %q", got)
	}
}
