package source

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"strings"
)

// Digest is an expected or computed content digest.
type Digest struct {
	// Algorithm is one of md5, sha1, sha256, sha512.
	Algorithm string `json:"algorithm"`
	// Hex is the lower-case hex digest.
	Hex string `json:"hex"`
}

func (d Digest) String() string { return d.Algorithm + ":" + d.Hex }

// ManifestEntry is one line of a checksum manifest.
type ManifestEntry struct {
	// Name as written in the manifest, cleaned (no leading "./" or "*").
	Name   string
	Digest Digest
}

func algorithmForHexLen(n int) string {
	switch n {
	case 32:
		return "md5"
	case 40:
		return "sha1"
	case 64:
		return "sha256"
	case 128:
		return "sha512"
	}
	return ""
}

// ParseManifest reads a checksum list as publishers ship them:
//
//	GNU coreutils:  <hex>  <name>   or  <hex> *<name>   (md5sum, sha1sum, sha256sum, sha512sum)
//	BSD / openssl:  SHA256 (<name>) = <hex>   or   MD5(<name>)= <hex>
//
// The algorithm follows from the tag (BSD) or the digest length (GNU). Blank lines and lines
// starting with "#" are skipped; any other unparsable line is an error (a manifest that cannot
// be read completely must not be half trusted).
func ParseManifest(data []byte) ([]ManifestEntry, error) {
	var out []ManifestEntry
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		e, err := parseManifestLine(line)
		if err != nil {
			return nil, fmt.Errorf("manifest line %d: %w", lineNo, err)
		}
		if prev, dup := seen[e.Name]; dup {
			if out[prev].Digest.Algorithm == e.Digest.Algorithm && out[prev].Digest.Hex != e.Digest.Hex {
				return nil, fmt.Errorf("manifest line %d: %q listed twice with different digests", lineNo, e.Name)
			}
			continue
		}
		seen[e.Name] = len(out)
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("manifest lists no objects")
	}
	return out, nil
}

var bsdLine = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9-]*) ?\((.+)\) ?= ?([0-9a-fA-F]+)\s*$`)

func parseManifestLine(line string) (ManifestEntry, error) {
	// BSD style: ALGO (name) = hex
	if m := bsdLine.FindStringSubmatch(line); m != nil {
		tag := strings.ReplaceAll(strings.ToLower(m[1]), "-", "")
		name, hx := m[2], strings.ToLower(m[3])
		if algo := algorithmForHexLen(len(hx)); algo == "" || algo != tag {
			return ManifestEntry{}, fmt.Errorf("unsupported or inconsistent digest %q for %q", m[1], name)
		}
		return entry(name, tag, hx)
	}
	// GNU style: hex, one space, then a space (text) or '*' (binary), then the name.
	fields := strings.SplitN(line, " ", 2)
	if len(fields) != 2 || len(fields[1]) < 2 {
		return ManifestEntry{}, fmt.Errorf("not a checksum line: %q", line)
	}
	hx := strings.ToLower(strings.TrimPrefix(fields[0], "\\"))
	algo := algorithmForHexLen(len(hx))
	if algo == "" {
		return ManifestEntry{}, fmt.Errorf("digest of unsupported length %d", len(hx))
	}
	if _, err := hex.DecodeString(hx); err != nil {
		return ManifestEntry{}, fmt.Errorf("digest is not hex: %q", fields[0])
	}
	name := fields[1]
	switch name[0] {
	case ' ', '*':
		name = name[1:]
	default:
		// some tools write a single space; accept it
	}
	return entry(name, algo, hx)
}

func entry(name, algo, hx string) (ManifestEntry, error) {
	clean := path.Clean(strings.TrimPrefix(name, "./"))
	if name == "" || clean == "." || strings.HasPrefix(clean, "../") || clean == ".." || strings.HasPrefix(clean, "/") {
		return ManifestEntry{}, fmt.Errorf("unsafe or empty name %q", name)
	}
	return ManifestEntry{Name: clean, Digest: Digest{Algorithm: algo, Hex: hx}}, nil
}
