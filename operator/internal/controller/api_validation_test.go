package controller

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
)

// The API server itself (the generated CRD's OpenAPI schema and CEL rules) rejects
// invalid BulkLoads, with messages that say what to fix.
func TestInvalidSpecsAreRejectedByTheAPIServer(t *testing.T) {
	ns := newNamespace(t)
	cases := []struct {
		name   string
		mutate func(bl *rdfv1.BulkLoad)
		want   string
	}{
		{"endpoint-scheme", func(bl *rdfv1.BulkLoad) { bl.Spec.Source.Endpoint = "ftp://dumps.example.org" },
			"source.endpoint must be an http:// or https:// URL with a host"},
		{"prefix-without-completion", func(bl *rdfv1.BulkLoad) { bl.Spec.Source.Completion = nil },
			"source.completion (a marker or a manifest) is required unless source.keys lists the objects"},
		{"marker-and-manifest", func(bl *rdfv1.BulkLoad) {
			bl.Spec.Source.Completion.Manifest = &rdfv1.ManifestSpec{Key: "SHA256SUMS"}
		}, "source.completion needs exactly one of marker or manifest"},
		{"two-cas", func(bl *rdfv1.BulkLoad) {
			bl.Spec.Source.CASecretRef = &rdfv1.KeyReference{Name: "a"}
			bl.Spec.Source.CAConfigMapRef = &rdfv1.KeyReference{Name: "b"}
		}, "set at most one of source.caSecretRef and source.caConfigMapRef"},
		{"insecure-with-ca", func(bl *rdfv1.BulkLoad) {
			bl.Spec.Source.CASecretRef = &rdfv1.KeyReference{Name: "a"}
			bl.Spec.Source.InsecureSkipTLSVerify = true
		}, "source.insecureSkipTLSVerify contradicts a configured CA"},
		{"bucket-name", func(bl *rdfv1.BulkLoad) { bl.Spec.Source.Bucket = "Not_A_Bucket" }, "spec.source.bucket"},
		{"zero-size", func(bl *rdfv1.BulkLoad) { bl.Spec.Database.Size = resource.MustParse("0") }, "database.size must be positive"},
		{"max-rejects-strict", func(bl *rdfv1.BulkLoad) { bl.Spec.Loader.OnError = rdfv1.OnErrorStrict },
			"loader.maxRejects applies only when loader.onError is skip"},
		{"budget-at-limit", func(bl *rdfv1.BulkLoad) { bl.Spec.Loader.MemoryBudget = ptr.To(resource.MustParse("10Gi")) },
			"loader.memoryBudget must be below loader.resources.limits.memory"},
		{"tiny-budget", func(bl *rdfv1.BulkLoad) { bl.Spec.Loader.MemoryBudget = ptr.To(resource.MustParse("1Mi")) },
			"loader.memoryBudget must be at least 64Mi"},
		{"on-error-enum", func(bl *rdfv1.BulkLoad) { bl.Spec.Loader.OnError = "ignore" }, `spec.loader.onError: Unsupported value: "ignore"`},
		{"keep-one", func(bl *rdfv1.BulkLoad) { bl.Spec.Snapshot.Keep = 1 }, "spec.snapshot.keep"},
		{"watch-interval", func(bl *rdfv1.BulkLoad) {
			bl.Spec.Trigger = rdfv1.TriggerSpec{Mode: rdfv1.TriggerWatch, Interval: metav1.Duration{Duration: 10 * time.Second}}
		}, "trigger.interval must be at least 30s in watch mode"},
		{"long-name", func(bl *rdfv1.BulkLoad) { bl.Name = strings.Repeat("n", 41) },
			"metadata.name must be at most 40 characters"},
		{"serving-without-volume", func(bl *rdfv1.BulkLoad) { bl.Spec.Serving.VolumeName = "" }, "spec.serving.volumeName"},
		{"short-deadline", func(bl *rdfv1.BulkLoad) { bl.Spec.Build.Deadline = &metav1.Duration{Duration: 30 * time.Second} },
			"build.deadline must be at least 1m"},
		{"short-node-loss-grace", func(bl *rdfv1.BulkLoad) {
			bl.Spec.Build.NodeLossGracePeriod = &metav1.Duration{Duration: 10 * time.Second}
		},
			"build.nodeLossGracePeriod must be at least 30s"},
		{"on-node-loss-enum", func(bl *rdfv1.BulkLoad) { bl.Spec.Serving.OnNodeLoss = "Migrate" }, `spec.serving.onNodeLoss: Unsupported value: "Migrate"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bl := newBulkLoad(ns, "invalid")
			tc.mutate(bl)
			err := k8s.Create(ctx, bl)
			if err == nil {
				t.Fatalf("accepted; want an error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
		})
	}

	// The reference spec itself is valid (so each case fails for its own reason).
	g := NewWithT(t)
	bl := newBulkLoad(ns, "valid")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())

	// Immutable fields.
	bl.Spec.Database.StorageClassName = "other"
	err := k8s.Update(ctx, bl)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("database.storageClassName is immutable"))
}

// What a user does not say is defaulted by the API server, to the values the
// operator's Go code also falls back to.
func TestDefaultsAreApplied(t *testing.T) {
	ns := newNamespace(t)
	g := NewWithT(t)
	// As a user writes it (YAML): Go structs would send zero values that are not defaulted.
	manifest := `
apiVersion: rdf.bulkload.io/v1alpha1
kind: BulkLoad
metadata:
  name: minimal
spec:
  source:
    endpoint: https://s3.example.org
    bucket: dumps
    keys: [a.nt.gz]
    credentialsSecretRef: {name: creds}
    caSecretRef: {name: ca}
  database:
    size: 1Gi
  serving:
    name: fuseki
    volumeName: db
`
	bl := &unstructured.Unstructured{}
	g.Expect(yaml.Unmarshal([]byte(manifest), &bl.Object)).To(Succeed())
	bl.SetNamespace(ns)
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	got := &rdfv1.BulkLoad{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(bl), got)).To(Succeed())
	s := got.Spec
	g.Expect(s.Database.Format).To(Equal(rdfv1.FormatTDB2))
	g.Expect(s.Loader.OnError).To(Equal(rdfv1.OnErrorStrict))
	g.Expect(s.Snapshot.Keep).To(Equal(int32(rdfv1.DefaultSnapshotKeep)))
	g.Expect(s.Snapshot.OnDelete).To(Equal(rdfv1.SnapshotRetain))
	g.Expect(s.Trigger.Mode).To(Equal(rdfv1.TriggerManual))
	g.Expect(s.Trigger.Interval.Duration).To(Equal(rdfv1.DefaultInterval))
	g.Expect(s.Trigger.SettlePeriod.Duration).To(Equal(rdfv1.DefaultSettlePeriod))
	g.Expect(s.Retry.Limit).To(Equal(int32(rdfv1.DefaultRetryLimit)))
	g.Expect(s.Retry.BuildAttempts).To(Equal(int32(rdfv1.DefaultBuildAttempts)))
	g.Expect(s.Retry.Backoff.Duration).To(Equal(rdfv1.DefaultBackoff))
	g.Expect(s.Retry.MaxBackoff.Duration).To(Equal(rdfv1.DefaultMaxBackoff))
	g.Expect(s.Source.CredentialsSecretRef.AccessKeyIDKey).To(Equal("AWS_ACCESS_KEY_ID"))
	g.Expect(s.Source.CredentialsSecretRef.SecretAccessKeyKey).To(Equal("AWS_SECRET_ACCESS_KEY"))
	g.Expect(s.Source.CASecretRef.Key).To(Equal("ca.crt"))
	g.Expect(s.Serving.Kind).To(Equal(rdfv1.WorkloadDeployment))
	g.Expect(s.Serving.AccessModes).To(Equal([]corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}))
	g.Expect(s.Build.Deadline).To(Equal(&metav1.Duration{Duration: rdfv1.DefaultBuildDeadline}))
	g.Expect(s.Build.NodeSelector).To(BeNil())
	g.Expect(s.Build.NodeLossGracePeriod).To(Equal(&metav1.Duration{Duration: rdfv1.DefaultNodeLossGracePeriod}))
	g.Expect(s.Retry.KeepFailedVolumesFor).To(Equal(&metav1.Duration{Duration: rdfv1.DefaultKeepFailedVolumesFor}))
	g.Expect(s.Serving.OnNodeLoss).To(Equal(rdfv1.NodeLossWait))
	g.Expect(s.Fetch.Resources).To(Equal(corev1.ResourceRequirements{}), "the fetch defaults are the operator's, not stored in the spec")
}
