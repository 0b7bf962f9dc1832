// Package managermetrics configures the manager's metrics endpoint as kubebuilder
// scaffolds it: HTTPS, and every request authenticated (TokenReview) and authorized
// (SubjectAccessReview, nonResourceURL /metrics verb get) by the kube-apiserver.
package managermetrics

import (
	"crypto/tls"
	"fmt"
	"path/filepath"

	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Names of the certificate and key in Options.CertPath (a kubernetes.io/tls Secret's keys).
const (
	CertName = "tls.crt"
	KeyName  = "tls.key"
)

// Options are the manager's --metrics-* flags.
type Options struct {
	// BindAddress of the endpoint; "0" disables it.
	BindAddress string
	// Secure serves HTTPS with authentication and authorization; false serves plain,
	// open HTTP.
	Secure bool
	// CertPath is a directory holding tls.crt and tls.key, reloaded when they change;
	// empty means a self-signed certificate made at start.
	CertPath string
}

// ServerOptions are the controller-runtime metrics server options for o.
func ServerOptions(o Options) (metricsserver.Options, error) {
	opts := metricsserver.Options{
		BindAddress:   o.BindAddress,
		SecureServing: o.Secure,
		// HTTP/2 stays off, as kubebuilder does, against the HTTP/2 Stream
		// Cancellation and Rapid Reset CVEs; a scrape needs nothing of it.
		TLSOpts: []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }},
	}
	if !o.Secure {
		if o.CertPath != "" {
			return opts, fmt.Errorf("a metrics certificate (%s) needs secure serving", o.CertPath)
		}
		return opts, nil
	}
	opts.FilterProvider = filters.WithAuthenticationAndAuthorization
	if o.CertPath != "" {
		// controller-runtime silently falls back to a self-signed certificate when the
		// files are missing; a certificate the user provided must be there and valid.
		cert, key := filepath.Join(o.CertPath, CertName), filepath.Join(o.CertPath, KeyName)
		if _, err := tls.LoadX509KeyPair(cert, key); err != nil {
			return opts, fmt.Errorf("metrics certificate: %w", err)
		}
		// controller-runtime watches these files and serves a renewed certificate.
		opts.CertDir, opts.CertName, opts.KeyName = o.CertPath, CertName, KeyName
	}
	return opts, nil
}
