// Package source describes an S3-compatible dump set (endpoint, bucket, prefix or keys,
// include patterns, completion marker or manifest) and resolves it to a concrete list of
// objects and a source revision. It is shared by the fetch step (cmd/fetch) and the
// operator's source watcher, so both agree on what "the dump set" and "its revision" are.
package source

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// Spec says where a dump set lives and how to tell that it is complete.
type Spec struct {
	// Endpoint is the S3 endpoint URL, e.g. https://s3.example.org or http://127.0.0.1:9000.
	Endpoint string
	Bucket   string
	// Prefix selects every object under it (recursively), e.g. "wikidata/20261120/".
	Prefix string
	// Keys are full object keys selected in addition to those under Prefix.
	Keys []string
	// Include keeps only objects under Prefix (or named by the manifest) whose path relative to
	// the base directory, or whose base name, matches one of these globs (path.Match syntax).
	// Empty keeps everything. Explicit Keys are always kept.
	Include []string
	// Marker is the full key of an object whose presence says the dump set is complete
	// (e.g. "wikidata/20261120/_SUCCESS").
	Marker string
	// Manifest is the full key of a checksum list (sha256sum/md5sum/BSD style) naming the
	// objects of the dump set relative to its own directory; its presence says the set is
	// complete and its digests verify the objects.
	Manifest string
	// CAFile is a PEM bundle trusted in addition to the system roots.
	CAFile string
	// CAPEM is the same as CAFile, in memory (the operator reads it from a Secret/ConfigMap).
	CAPEM []byte
	// Insecure skips TLS verification (testing only).
	Insecure bool
	// Region, optional.
	Region string
}

// Credentials for the endpoint. They are never formatted into errors or logs.
type Credentials struct {
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
}

// String never reveals the secret parts.
func (c Credentials) String() string {
	if c.AccessKeyID == "" {
		return "anonymous"
	}
	return "access key " + c.AccessKeyID
}

// GoString never reveals the secret parts either (for %#v).
func (c Credentials) GoString() string { return "source.Credentials{" + c.String() + "}" }

// CredentialsFromEnv reads AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN.
func CredentialsFromEnv() Credentials {
	return Credentials{
		AccessKeyID:     os.Getenv("AWS_ACCESS_KEY_ID"),
		SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken:    os.Getenv("AWS_SESSION_TOKEN"),
	}
}

// Redact replaces every occurrence of the secret parts of c in s by "***".
func (c Credentials) Redact(s string) string {
	for _, secret := range []string{c.SecretAccessKey, c.SessionToken} {
		if len(secret) >= 4 {
			s = strings.ReplaceAll(s, secret, "***")
		}
	}
	return s
}

// Validate checks the spec for usage errors.
func (s Spec) Validate() error {
	var errs []error
	if s.Endpoint == "" {
		errs = append(errs, errors.New("endpoint is required"))
	} else if _, _, err := parseEndpoint(s.Endpoint); err != nil {
		errs = append(errs, err)
	}
	if s.Bucket == "" {
		errs = append(errs, errors.New("bucket is required"))
	} else if err := s3utils.CheckValidBucketName(s.Bucket); err != nil {
		errs = append(errs, fmt.Errorf("bucket %q: %w", s.Bucket, err))
	}
	if s.Marker != "" && s.Manifest != "" {
		errs = append(errs, errors.New("marker and manifest are mutually exclusive (a manifest is its own completion marker)"))
	}
	if s.Marker == "" && s.Manifest == "" && (s.Prefix != "" || len(s.Keys) == 0) {
		errs = append(errs, errors.New("a completion marker or a manifest is required unless explicit keys alone name the objects (a half-uploaded prefix must never be loaded)"))
	}
	if s.Prefix == "" && len(s.Keys) == 0 && s.Manifest == "" {
		errs = append(errs, errors.New("a prefix, keys or a manifest is required to select objects"))
	}
	if err := s.validateDated(); err != nil {
		errs = append(errs, err)
	}
	for _, g := range s.Include {
		if _, err := path.Match(g, ""); err != nil {
			errs = append(errs, fmt.Errorf("include pattern %q: %w", g, err))
		}
	}
	return errors.Join(errs...)
}

func parseEndpoint(endpoint string) (host string, secure bool, err error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "", false, fmt.Errorf("endpoint %q is not a URL like https://host[:port]", redactURL(endpoint))
	}
	if u.User != nil {
		return "", false, errors.New("endpoint must not contain credentials; pass them through the environment")
	}
	switch u.Scheme {
	case "http":
		return u.Host, false, nil
	case "https":
		return u.Host, true, nil
	}
	return "", false, fmt.Errorf("endpoint %q: scheme must be http or https", redactURL(endpoint))
}

// redactURL drops userinfo from a URL-ish string.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		u.User = nil
		return u.String()
	}
	if i := strings.LastIndex(s, "@"); i >= 0 {
		if j := strings.Index(s, "://"); j >= 0 && j < i {
			return s[:j+3] + s[i+1:]
		}
	}
	return s
}

// SafeEndpoint is the endpoint without any userinfo, for reports and messages.
func (s Spec) SafeEndpoint() string { return redactURL(s.Endpoint) }

// ClientOptions tune the S3 client.
type ClientOptions struct {
	// MaxRetries of minio-go's own request retries; 1 disables them (callers that do their own
	// retries with backoff should pass 1).
	MaxRetries int
}

// NewClient builds a minio-go client for the spec.
func NewClient(s Spec, c Credentials, o ClientOptions) (*minio.Client, error) {
	host, secure, err := parseEndpoint(s.Endpoint)
	if err != nil {
		return nil, err
	}
	tr, err := minio.DefaultTransport(secure)
	if err != nil {
		return nil, err
	}
	if secure && (s.CAFile != "" || len(s.CAPEM) > 0 || s.Insecure) {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if tr.TLSClientConfig != nil {
			cfg = tr.TLSClientConfig.Clone()
		}
		if s.CAFile != "" || len(s.CAPEM) > 0 {
			pem := s.CAPEM
			if s.CAFile != "" {
				var err error
				if pem, err = os.ReadFile(s.CAFile); err != nil {
					return nil, fmt.Errorf("reading CA file: %w", err)
				}
			}
			pool, err := x509.SystemCertPool()
			if err != nil || pool == nil {
				pool = x509.NewCertPool()
			}
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("the CA bundle %s holds no PEM certificate", s.CAFile)
			}
			cfg.RootCAs = pool
		}
		cfg.InsecureSkipVerify = s.Insecure //nolint:gosec // explicit opt-in flag
		tr.TLSClientConfig = cfg
	}
	var creds *credentials.Credentials
	if c.AccessKeyID == "" && c.SecretAccessKey == "" {
		creds = credentials.NewStatic("", "", "", credentials.SignatureAnonymous)
	} else {
		creds = credentials.NewStaticV4(c.AccessKeyID, c.SecretAccessKey, c.SessionToken)
	}
	return minio.New(host, &minio.Options{
		Creds:      creds,
		Secure:     secure,
		Transport:  http.RoundTripper(tr),
		Region:     s.Region,
		MaxRetries: o.MaxRetries,
	})
}

// baseDir is the "directory" local paths and include patterns are relative to: the prefix
// up to its last "/", else the manifest's directory, else the common directory of the keys.
func (s Spec) baseDir() string {
	switch {
	case s.Prefix != "":
		return dirOf(s.Prefix)
	case s.Manifest != "":
		return dirOf(s.ManifestKey())
	case len(s.Keys) > 0:
		common := dirOf(strings.TrimLeft(s.Keys[0], "/"))
		for _, k := range s.Keys[1:] {
			for !strings.HasPrefix(strings.TrimLeft(k, "/"), common) {
				common = dirOf(strings.TrimSuffix(common, "/"))
			}
		}
		return common
	}
	return ""
}

// dirOf is everything up to and including the last "/" ("" if none).
func dirOf(k string) string {
	if i := strings.LastIndex(k, "/"); i >= 0 {
		return k[:i+1]
	}
	return ""
}

// ResolveKey normalizes a full object key (a leading "/" is dropped).
func (s Spec) ResolveKey(k string) string { return strings.TrimLeft(k, "/") }

// MarkerKey is the full key of the completion marker, or "".
func (s Spec) MarkerKey() string { return s.ResolveKey(s.Marker) }

// ManifestKey is the full key of the manifest, or "".
func (s Spec) ManifestKey() string { return s.ResolveKey(s.Manifest) }

// LocalPath is where an object lands below the destination directory: its key relative to
// the base directory. It refuses keys that would escape the destination.
func (s Spec) LocalPath(key string) (string, error) {
	rel := strings.TrimPrefix(key, s.baseDir())
	clean := path.Clean(rel)
	if rel == "" || strings.HasSuffix(rel, "/") || clean == "." || strings.HasPrefix(clean, "/") ||
		clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(rel, "\x00") {
		return "", fmt.Errorf("object key %q does not map to a safe local path", key)
	}
	for _, part := range strings.Split(clean, "/") {
		if part == ".." {
			return "", fmt.Errorf("object key %q does not map to a safe local path", key)
		}
	}
	return clean, nil
}

// included reports whether key passes the include globs.
func (s Spec) included(key string) bool {
	if len(s.Include) == 0 {
		return true
	}
	rel := strings.TrimPrefix(key, s.baseDir())
	base := path.Base(key)
	for _, g := range s.Include {
		if ok, _ := path.Match(g, rel); ok {
			return true
		}
		if !strings.Contains(g, "/") {
			if ok, _ := path.Match(g, base); ok {
				return true
			}
		}
	}
	return false
}
