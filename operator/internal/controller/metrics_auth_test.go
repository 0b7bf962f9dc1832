package controller

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/managermetrics"
)

// The manager's metrics endpoint, configured as cmd/manager does and running as the
// manager's ServiceAccount with only config/default's RBAC, serves HTTPS and asks the
// API server about every scraper: no token is 401, a ServiceAccount token without the
// metrics-reader ClusterRole 403, one bound to it 200 with the build metrics.
func TestMetricsEndpointNeedsTheMetricsReaderRole(t *testing.T) {
	g := NewWithT(t)
	objs := installConfigDefault(t)
	g.Expect(findRendered(objs, "ClusterRole", "rdf-bulkload-metrics-reader")).NotTo(BeNil())
	g.Expect(findRendered(objs, "Service", "rdf-bulkload-controller-manager-metrics")).NotTo(BeNil())

	addr := freeLoopbackAddr(t)
	opts, err := managermetrics.ServerOptions(managermetrics.Options{BindAddress: addr, Secure: true})
	g.Expect(err).NotTo(HaveOccurred())
	startControllerWithOptions(t, impersonating("rdf-bulkload-system", "rdf-bulkload-controller-manager"),
		func(o *ctrl.Options) { o.Metrics = opts })

	ns := newNamespace(t)
	g.Expect(k8s.Create(ctx, newBulkLoad(ns, "scraped"))).To(Succeed())
	scraper, stranger := serviceAccountToken(t, ns, "prometheus"), serviceAccountToken(t, ns, "stranger")
	g.Expect(k8s.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "rdf-bulkload-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prometheus", Namespace: ns}},
	})).To(Succeed())

	// The certificate is self-signed (what the chart's ServiceMonitor skips verifying by default).
	https := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	url := "https://" + addr + "/metrics"
	eventually(t, func(g Gomega) {
		code, _ := get(g, https, url, "")
		g.Expect(code).To(Equal(http.StatusUnauthorized), "no token")
	})
	code, _ := get(g, https, url, stranger)
	g.Expect(code).To(Equal(http.StatusForbidden), "a ServiceAccount without the metrics-reader role")
	eventually(t, func(g Gomega) {
		code, body := get(g, https, url, scraper)
		g.Expect(code).To(Equal(http.StatusOK), body)
		g.Expect(metricLines(body, "rdf_bulkload_phase{")).To(ContainElement(And(
			ContainSubstring(`bulkload="scraped"`), ContainSubstring(`namespace="`+ns+`"`))))
	})

	// Plain HTTP is not served.
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + addr + "/metrics")
	if err == nil {
		_ = resp.Body.Close()
		g.Expect(resp.StatusCode).To(Equal(http.StatusBadRequest), "plain HTTP")
	}
}

// With --metrics-cert-path the endpoint serves that certificate (a client trusting
// only its CA connects), and a missing certificate is an error, not a silent
// self-signed one; with plain HTTP it is a contradiction.
func TestMetricsEndpointServesTheProvidedCertificate(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("rdf-bulkload-metrics.example", nil, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(filepath.Join(dir, managermetrics.CertName), certPEM, 0o600)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, managermetrics.KeyName), keyPEM, 0o600)).To(Succeed())

	addr := freeLoopbackAddr(t)
	opts, err := managermetrics.ServerOptions(managermetrics.Options{BindAddress: addr, Secure: true, CertPath: dir})
	g.Expect(err).NotTo(HaveOccurred())
	httpClient, err := rest.HTTPClientFor(restConfig)
	g.Expect(err).NotTo(HaveOccurred())
	srv, err := metricsserver.NewServer(opts, restConfig, httpClient)
	g.Expect(err).NotTo(HaveOccurred())
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Start(runCtx) }()
	t.Cleanup(func() { cancel(); <-done })

	roots := x509.NewCertPool()
	g.Expect(roots.AppendCertsFromPEM(certPEM)).To(BeTrue())
	verifying := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: roots, ServerName: "rdf-bulkload-metrics.example"}}}
	eventually(t, func(g Gomega) {
		code, _ := get(g, verifying, "https://"+addr+"/metrics", "")
		g.Expect(code).To(Equal(http.StatusUnauthorized))
	})

	_, err = managermetrics.ServerOptions(managermetrics.Options{BindAddress: addr, Secure: true, CertPath: t.TempDir()})
	g.Expect(err).To(MatchError(ContainSubstring(managermetrics.CertName)))
	_, err = managermetrics.ServerOptions(managermetrics.Options{BindAddress: addr, Secure: false, CertPath: dir})
	g.Expect(err).To(HaveOccurred(), "a certificate for plain HTTP")
}

// freeLoopbackAddr is a loopback address with a port free a moment ago.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

// serviceAccountToken creates a ServiceAccount and returns a token the API server
// issues for it (TokenRequest), as the kubelet mounts into a scraper's pod.
func serviceAccountToken(t *testing.T, ns, name string) string {
	t.Helper()
	g := NewWithT(t)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	g.Expect(k8s.Create(ctx, sa)).To(Succeed())
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}
	g.Expect(k8s.SubResource("token").Create(ctx, sa, tr)).To(Succeed())
	g.Expect(tr.Status.Token).NotTo(BeEmpty())
	return tr.Status.Token
}

// get does GET url with the bearer token (none when empty) and returns status and body.
func get(g Gomega, c *http.Client, url, token string) (int, string) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	g.Expect(err).NotTo(HaveOccurred())
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, string(body)
}

// metricLines are the lines of a text exposition that start with prefix.
func metricLines(body, prefix string) []string {
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) {
			lines = append(lines, l)
		}
	}
	return lines
}
