package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BulkLoadSpec says where a dump set lives, how to build a database from it, and
// where the result goes.
type BulkLoadSpec struct {
	// source is the S3-compatible location of the RDF dump files.
	// +required
	Source SourceSpec `json:"source"`

	// database describes the database to build and the volumes it is built on.
	// +required
	Database DatabaseSpec `json:"database"`

	// loader configures the load step (the rdf-bulkload binary).
	// +kubebuilder:default={}
	// +optional
	Loader LoaderSpec `json:"loader,omitempty"`

	// fetch configures the step that copies the source objects onto the scratch volume.
	// +kubebuilder:default={}
	// +optional
	Fetch FetchSpec `json:"fetch,omitempty"`

	// validate configures the step in which Jena opens the new database and answers
	// probe queries before it is snapshotted.
	// +kubebuilder:default={}
	// +optional
	Validate ValidateSpec `json:"validate,omitempty"`

	// snapshot configures the VolumeSnapshots of built databases and their retention.
	// +kubebuilder:default={}
	// +optional
	Snapshot SnapshotSpec `json:"snapshot,omitempty"`

	// serving names the query workload that receives each new database. Without it
	// the build ends with a ready VolumeSnapshot.
	// +optional
	Serving *ServingSpec `json:"serving,omitempty"`

	// trigger decides when a build starts: on spec changes (manual) or when a new
	// complete dump set appears in the source (watch).
	// +kubebuilder:default={}
	// +optional
	Trigger TriggerSpec `json:"trigger,omitempty"`

	// retry bounds the retries of retryable failures (transient I/O, interrupted
	// load); final failures (bad input, missing input, resources exhausted) are not retried.
	// +kubebuilder:default={}
	// +optional
	Retry RetrySpec `json:"retry,omitempty"`

	// build places the build pods on nodes and bounds how long a build attempt may run.
	// Changes apply to the next workflow; to move a build whose pods cannot be
	// scheduled, delete its workflow (status.workflow.name) and the operator recreates
	// it from the current spec.
	// +kubebuilder:default={}
	// +optional
	Build BuildSpec `json:"build,omitempty"`

	// serviceAccountName is the ServiceAccount the build pods run as. It needs the
	// permissions of Argo's executor (create/patch workflowtaskresults): the Helm
	// chart's argo.workflowServiceAccount and config/rbac create
	// "rdf-bulkload-workflow" with them. Empty means the namespace's default
	// ServiceAccount, whose steps then end in Error.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
}

// BuildSpec places the build pods (fetch, load, validate) and bounds a build attempt.
type BuildSpec struct {
	// nodeSelector is set on every build pod, e.g. to pick the nodes with local NVMe.
	// The fetch pod mounts both build volumes, so with a WaitForFirstConsumer storage
	// class both bind on the node it is scheduled to, and the later steps follow them
	// there; the fetch pod therefore requests at least what the load step requests, so
	// that this node fits the load.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations of every build pod, e.g. for a taint reserving the NVMe nodes.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// affinity of every build pod.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// deadline bounds one build attempt (the workflow's activeDeadlineSeconds): Argo
	// stops a workflow that still runs after it, also one whose pods were never
	// scheduled, and the build fails with reason DeadlineExceeded (not retried).
	// +kubebuilder:default="24h"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m')",message="build.deadline must be at least 1m"
	// +optional
	Deadline *metav1.Duration `json:"deadline,omitempty"`

	// nodeLossGracePeriod is how long a node may be NotReady (or gone) before the
	// operator gives it up: a build whose step pod runs there, or whose volumes are bound
	// to it, ends its attempt (reason NodeLost, retried: the next attempt runs on new
	// volumes elsewhere when the old ones were node-local), and a served volume on it
	// follows serving.onNodeLoss. Shorter than Kubernetes' own eviction (5m) makes no sense.
	// +kubebuilder:default="5m"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('30s')",message="build.nodeLossGracePeriod must be at least 30s"
	// +optional
	NodeLossGracePeriod *metav1.Duration `json:"nodeLossGracePeriod,omitempty"`

	// exclusiveNode keeps the pods of other builds (of any BulkLoad, in any namespace)
	// off the node this build's pods run on, and this build's pods off a node where
	// another build's pods run: a required pod anti-affinity on the build pods' labels,
	// by node (kubernetes.io/hostname). Use it when one build needs a node's local disk
	// and I/O to itself. Kubernetes checks it only when a pod is scheduled, so it holds
	// while some pod of the build exists (not in the seconds between two steps).
	// +optional
	ExclusiveNode bool `json:"exclusiveNode,omitempty"`

	// podMetadata are labels and annotations put on every build pod (fetch, load,
	// validate), e.g. for a cost-allocation label or an autoscaler's annotations. The
	// operator's own labels (rdf.bulkload.io/*, app.kubernetes.io/managed-by) win over
	// these. Its default annotations, karpenter.sh/do-not-disrupt: "true" and
	// cluster-autoscaler.kubernetes.io/safe-to-evict: "false" (an autoscaler that
	// drains the node loses the work since the last checkpoint, and with node-local
	// storage the volumes too), give way to them.
	// +optional
	PodMetadata *BuildPodMetadata `json:"podMetadata,omitempty"`

	// priorityClassName of every build pod, e.g. one above the batch jobs a day-long
	// load should not be preempted by.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// BuildPodMetadata are labels and annotations of the build pods.
type BuildPodMetadata struct {
	// labels of every build pod.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// annotations of every build pod. Set karpenter.sh/do-not-disrupt or
	// cluster-autoscaler.kubernetes.io/safe-to-evict here to change the defaults.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// SourceSpec is an S3-compatible location holding a dump set.
// +kubebuilder:validation:XValidation:rule="(has(self.keys) && size(self.keys) > 0) || has(self.completion)",message="source.completion (a marker or a manifest) is required unless source.keys lists the objects: a prefix alone may be half-uploaded"
// +kubebuilder:validation:XValidation:rule="!(has(self.caSecretRef) && has(self.caConfigMapRef))",message="set at most one of source.caSecretRef and source.caConfigMapRef"
// +kubebuilder:validation:XValidation:rule="!(self.insecureSkipTLSVerify && (has(self.caSecretRef) || has(self.caConfigMapRef)))",message="source.insecureSkipTLSVerify contradicts a configured CA"
type SourceSpec struct {
	// endpoint is the base URL of the S3 API, e.g. https://s3.eu-west-1.amazonaws.com
	// or http://minio.storage:9000.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHostname() != ''",message="source.endpoint must be an http:// or https:// URL with a host"
	// +required
	Endpoint string `json:"endpoint"`

	// bucket is the bucket holding the dump set.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`
	// +required
	Bucket string `json:"bucket"`

	// prefix selects the objects under this key prefix, e.g. "wikidata/2026-11-20/".
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Prefix string `json:"prefix,omitempty"`

	// keys lists object keys to load, in addition to those under prefix.
	// +kubebuilder:validation:MaxItems=10000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=1024
	// +listType=set
	// +optional
	Keys []string `json:"keys,omitempty"`

	// include keeps only objects whose key (relative to prefix) matches one of these
	// glob patterns, e.g. "*.nt.gz". Empty means every object.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	// +listType=set
	// +optional
	Include []string `json:"include,omitempty"`

	// completion names the object that says the dump set is completely uploaded.
	// +optional
	Completion *CompletionSpec `json:"completion,omitempty"`

	// credentialsSecretRef names a Secret in the BulkLoad's namespace with the access
	// key pair. Without it the bucket is read anonymously.
	// +optional
	CredentialsSecretRef *CredentialsSecretReference `json:"credentialsSecretRef,omitempty"`

	// caSecretRef names a Secret key holding the PEM CA bundle that signs the endpoint's certificate.
	// +optional
	CASecretRef *KeyReference `json:"caSecretRef,omitempty"`

	// caConfigMapRef names a ConfigMap key holding the PEM CA bundle that signs the endpoint's certificate.
	// +optional
	CAConfigMapRef *KeyReference `json:"caConfigMapRef,omitempty"`

	// insecureSkipTLSVerify disables certificate verification (test setups only).
	// +kubebuilder:default=false
	// +optional
	InsecureSkipTLSVerify bool `json:"insecureSkipTLSVerify,omitempty"`
}

// CompletionSpec says how to tell that a dump set is complete: exactly one of a
// marker object or a manifest object.
// +kubebuilder:validation:XValidation:rule="has(self.marker) != has(self.manifest)",message="source.completion needs exactly one of marker or manifest"
type CompletionSpec struct {
	// marker is the full key of an object whose presence says every object under
	// prefix is uploaded, e.g. "wikidata/2026-11-20/_SUCCESS".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Marker string `json:"marker,omitempty"`

	// manifest names an object listing the dump set's objects with their sizes and digests.
	// +optional
	Manifest *ManifestSpec `json:"manifest,omitempty"`
}

// DigestAlgorithm names the digest used by a manifest.
// +kubebuilder:validation:Enum=sha256;sha512;md5
type DigestAlgorithm string

const (
	DigestSHA256 DigestAlgorithm = "sha256"
	DigestSHA512 DigestAlgorithm = "sha512"
	DigestMD5    DigestAlgorithm = "md5"
)

// ManifestSpec names a manifest object.
type ManifestSpec struct {
	// key is the full key of the manifest object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +required
	Key string `json:"key"`

	// digestAlgorithm is the algorithm of the digests listed in the manifest.
	// +kubebuilder:default=sha256
	// +optional
	DigestAlgorithm DigestAlgorithm `json:"digestAlgorithm,omitempty"`
}

// CredentialsSecretReference names a Secret holding an S3 access key pair.
type CredentialsSecretReference struct {
	// name of the Secret, in the BulkLoad's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// accessKeyIDKey is the Secret key holding the access key id.
	// +kubebuilder:default=AWS_ACCESS_KEY_ID
	// +kubebuilder:validation:MaxLength=253
	// +optional
	AccessKeyIDKey string `json:"accessKeyIDKey,omitempty"`

	// secretAccessKeyKey is the Secret key holding the secret access key.
	// +kubebuilder:default=AWS_SECRET_ACCESS_KEY
	// +kubebuilder:validation:MaxLength=253
	// +optional
	SecretAccessKeyKey string `json:"secretAccessKeyKey,omitempty"`
}

// KeyReference names one key of a Secret or ConfigMap in the BulkLoad's namespace.
type KeyReference struct {
	// name of the Secret or ConfigMap.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// key within it.
	// +kubebuilder:default="ca.crt"
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Key string `json:"key,omitempty"`
}

// DatabaseFormat is the on-disk format of the built database.
// +kubebuilder:validation:Enum=tdb2
type DatabaseFormat string

// FormatTDB2 is Apache Jena TDB2, opened by unmodified Jena 5.x and Fuseki.
const FormatTDB2 DatabaseFormat = "tdb2"

// DatabaseSpec describes the database and the volumes it is built on.
type DatabaseSpec struct {
	// format of the database.
	// +kubebuilder:default=tdb2
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="database.format is immutable"
	// +optional
	Format DatabaseFormat `json:"format,omitempty"`

	// storageClassName is the class of the build volumes, ideally local NVMe with
	// WaitForFirstConsumer binding. Empty means the cluster's default class. Its
	// provisioner must be a CSI driver (a CSIDriver object) with a VolumeSnapshotClass,
	// checked before a build starts. It is immutable because snapshots restore only
	// through the same CSI driver.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="database.storageClassName is immutable"
	// +optional
	StorageClassName string `json:"storageClassName,omitempty"`

	// size of the database volume (the database, its build report and rejects file).
	// +kubebuilder:validation:XValidation:rule="quantity(self).isGreaterThan(quantity('0'))",message="database.size must be positive"
	// +required
	Size resource.Quantity `json:"size"`

	// scratchSize is the size of the scratch volume holding the downloaded inputs
	// and the loader's temporary sort runs. Defaults to size.
	// +kubebuilder:validation:XValidation:rule="quantity(self).isGreaterThan(quantity('0'))",message="database.scratchSize must be positive"
	// +optional
	ScratchSize *resource.Quantity `json:"scratchSize,omitempty"`

	// jena is the Apache Jena major release that will serve the database (Fuseki, tdb2.*):
	// "5" (the default: byte-identical to Jena 5.6.0's loaders) or "6" (to Jena 6.2.0's). A
	// TDB2 database keeps small literals inline in its indexes, and Jena 6 inlines
	// xsd:decimal values canonicalised (12.50 as 12.5), Jena 5 as written: served by the
	// other release, queries naming such a value miss it. The chart's Fuseki is Jena 5.
	// +optional
	Jena JenaRelease `json:"jena,omitempty"`
}

// JenaRelease is an Apache Jena major release a database is built for.
// +kubebuilder:validation:Enum="5";"6"
type JenaRelease string

const (
	// Jena5 is Jena 5.x (checked: 5.6.0).
	Jena5 JenaRelease = "5"
	// Jena6 is Jena 6.x (checked: 6.2.0).
	Jena6 JenaRelease = "6"
)

// BadInputPolicy says what the loader does with a malformed input line.
// +kubebuilder:validation:Enum=strict;skip
type BadInputPolicy string

const (
	// OnErrorStrict stops the load at the first bad line (a final failure).
	OnErrorStrict BadInputPolicy = "strict"
	// OnErrorSkip writes bad lines to a rejects file and goes on, up to maxRejects.
	OnErrorSkip BadInputPolicy = "skip"
)

// LoaderSpec configures the load step.
// +kubebuilder:validation:XValidation:rule="(has(self.onError) && self.onError == 'skip') || !has(self.maxRejects)",message="loader.maxRejects applies only when loader.onError is skip"
// +kubebuilder:validation:XValidation:rule="!has(self.memoryBudget) || !has(self.resources) || !has(self.resources.limits) || !('memory' in self.resources.limits) || quantity(self.memoryBudget).isLessThan(quantity(self.resources.limits['memory']))",message="loader.memoryBudget must be below loader.resources.limits.memory: the loader needs headroom beyond its budget"
type LoaderSpec struct {
	// image of the loader (contains rdf-bulkload and rdf-bulkload-validate).
	// Empty means the operator's default loader image.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Image string `json:"image,omitempty"`

	// imagePullPolicy of the loader and validate containers.
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// resources of the load container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// memoryBudget is the memory the loader plans with (dictionary, sort runs).
	// Defaults to three quarters of the memory limit (or request), else 2Gi.
	// +kubebuilder:validation:XValidation:rule="quantity(self).compareTo(quantity('64Mi')) >= 0",message="loader.memoryBudget must be at least 64Mi"
	// +optional
	MemoryBudget *resource.Quantity `json:"memoryBudget,omitempty"`

	// threads is the loader's parallelism. Defaults to the CPU limit (or request), else 2.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	// +optional
	Threads int32 `json:"threads,omitempty"`

	// onError is the bad-input policy: strict stops at the first bad line, skip
	// records bad lines in a rejects file.
	// +kubebuilder:default=strict
	// +optional
	OnError BadInputPolicy `json:"onError,omitempty"`

	// maxRejects is the number of rejected lines after which a skip-policy load fails.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxRejects *int64 `json:"maxRejects,omitempty"`

	// skipPlanCheck starts the load even when the loader's plan, estimated from a sample
	// of the input, says memory or scratch space cannot hold the build (exit 5 before
	// any work otherwise). For an estimate known to be wrong; a build that really does
	// not fit then fails later, keeping its volumes for a resumed attempt. Like
	// database.scratchSize it is not part of the revision: setting it after a refusal
	// retries the same revision.
	// +optional
	SkipPlanCheck bool `json:"skipPlanCheck,omitempty"`
}

// FetchSpec configures the fetch step.
type FetchSpec struct {
	// image of the fetch step. Empty means the operator's own image, which ships
	// rdf-bulkload-fetch.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Image string `json:"image,omitempty"`

	// imagePullPolicy of the fetch container. Empty means the operator's default
	// (--image-pull-policy), not loader.imagePullPolicy: the fetch image is usually
	// the operator's own, released on another cadence than the loader's.
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// resources of the fetch container. Empty means requests of 250m CPU and 256Mi
	// memory and a 1Gi memory limit (8 parallel ranged reads of about 1 MiB each, the
	// digests and the Go runtime).
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
}

// ValidateSpec configures the validate step.
type ValidateSpec struct {
	// image of the validate step (contains rdf-bulkload-validate). Empty means loader.image.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Image string `json:"image,omitempty"`

	// resources of the validate container. Empty means loader.resources.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
}

// SnapshotDeletionPolicy says what happens to snapshots when the BulkLoad is deleted.
// +kubebuilder:validation:Enum=Retain;Delete
type SnapshotDeletionPolicy string

const (
	// SnapshotRetain keeps the retained snapshots (and restored serving volumes) when
	// the BulkLoad is deleted.
	SnapshotRetain SnapshotDeletionPolicy = "Retain"
	// SnapshotDelete deletes them with the BulkLoad, except a volume the serving
	// workload still mounts.
	SnapshotDelete SnapshotDeletionPolicy = "Delete"
)

// SnapshotSpec configures the VolumeSnapshots of built databases.
type SnapshotSpec struct {
	// volumeSnapshotClassName is the class of the snapshots. Empty means the
	// cluster's default class for the volume's driver. Before a build starts, the
	// class (or the one default) must exist with the database StorageClass's
	// provisioner as its driver, else the BulkLoad is Stalled (SnapshotUnsupported).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	VolumeSnapshotClassName string `json:"volumeSnapshotClassName,omitempty"`

	// keep is how many snapshots (the current one included) are retained; older
	// ones are pruned. At least 2, so the previous database stays for rollback.
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=100
	// +optional
	Keep int32 `json:"keep,omitempty"`

	// readyTimeout is how long a snapshot may take to become readyToUse. Errors the
	// snapshot controller reports meanwhile are retried by it and only shown; past
	// the timeout the build fails. The default allows for the first, full snapshot
	// of a large volume on cloud block storage, which can take hours.
	// +kubebuilder:default="6h"
	// +optional
	ReadyTimeout metav1.Duration `json:"readyTimeout,omitempty"`

	// onDelete says whether retained snapshots outlive the BulkLoad.
	// +kubebuilder:default=Retain
	// +optional
	OnDelete SnapshotDeletionPolicy `json:"onDelete,omitempty"`
}

// WorkloadKind is the kind of the serving workload.
// +kubebuilder:validation:Enum=Deployment;StatefulSet
type WorkloadKind string

const (
	WorkloadDeployment  WorkloadKind = "Deployment"
	WorkloadStatefulSet WorkloadKind = "StatefulSet"
)

// ServingSpec names the query workload (e.g. Fuseki) that mounts the database.
type ServingSpec struct {
	// kind of the workload.
	// +kubebuilder:default=Deployment
	// +optional
	Kind WorkloadKind `json:"kind,omitempty"`

	// name of the workload, in the BulkLoad's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// volumeName is the pod template volume switched to the PVC restored from the
	// new snapshot (a rolling update).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	VolumeName string `json:"volumeName"`

	// storageClassName of the restored volume. Empty means database.storageClassName.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	StorageClassName string `json:"storageClassName,omitempty"`

	// accessModes of the restored volume. Whatever they are, the workload must run one
	// replica: a TDB2 database is opened by one process (its lock refuses a second).
	// +kubebuilder:default={"ReadWriteOnce"}
	// +kubebuilder:validation:MaxItems=4
	// +listType=atomic
	// +optional
	AccessModes []corev1.PersistentVolumeAccessMode `json:"accessModes,omitempty"`

	// snapshotName pins the workload to one of the retained snapshots (a name from
	// status.snapshots), e.g. the previous one to roll back. Builds go on and are
	// recorded, but the workload keeps this snapshot until the field is cleared, when
	// it returns to the newest one. A pinned snapshot is never pruned.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	SnapshotName string `json:"snapshotName,omitempty"`

	// onNodeLoss says what happens when the served volume is node-local and its node
	// is gone or NotReady past build.nodeLossGracePeriod. Wait (the default) reports it
	// (reason ServingNodeLost) and waits for the node to return; Rebuild builds the
	// served revision again from the source, on another node. Node-local snapshots are
	// lost with their node: they are not backups.
	// +kubebuilder:default=Wait
	// +optional
	OnNodeLoss NodeLossPolicy `json:"onNodeLoss,omitempty"`
}

// NodeLossPolicy says what happens when the node holding the served volume is lost.
// +kubebuilder:validation:Enum=Wait;Rebuild
type NodeLossPolicy string

const (
	// NodeLossWait waits for the node to return (a reboot, a kubelet restart).
	NodeLossWait NodeLossPolicy = "Wait"
	// NodeLossRebuild builds the served revision again from the source.
	NodeLossRebuild NodeLossPolicy = "Rebuild"
)

// TriggerMode says what starts a build.
// +kubebuilder:validation:Enum=manual;watch
type TriggerMode string

const (
	// TriggerManual builds when the build-relevant spec changes (or trigger.rebuild does).
	TriggerManual TriggerMode = "manual"
	// TriggerWatch polls the source and builds each new complete dump set.
	TriggerWatch TriggerMode = "watch"
)

// TriggerSpec decides when builds start.
// +kubebuilder:validation:XValidation:rule="!has(self.mode) || self.mode != 'watch' || !has(self.interval) || duration(self.interval) >= duration('30s')",message="trigger.interval must be at least 30s in watch mode"
type TriggerSpec struct {
	// mode: manual (build on spec change) or watch (poll the source for new complete dump sets).
	// +kubebuilder:default=manual
	// +optional
	Mode TriggerMode `json:"mode,omitempty"`

	// interval between polls of the source in watch mode.
	// +kubebuilder:default="5m"
	// +optional
	Interval metav1.Duration `json:"interval,omitempty"`

	// settlePeriod is how long a dump set must stay unchanged after its completion
	// object appears before it is built (watch mode).
	// +kubebuilder:default="2m"
	// +optional
	SettlePeriod metav1.Duration `json:"settlePeriod,omitempty"`

	// rebuild: changing it to any new value builds again from the same source, in both
	// trigger modes: it is part of the revision, so the build gets new volumes and a new
	// snapshot name (also after a final failure, or when the snapshot name is taken).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Rebuild string `json:"rebuild,omitempty"`
}

// RetrySpec bounds retries of retryable failures.
type RetrySpec struct {
	// limit is how often a failing step is retried inside one workflow (at once: a
	// backoff there would delay final failures too).
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=20
	// +optional
	Limit int32 `json:"limit,omitempty"`

	// buildAttempts is how many workflows are started for one source revision
	// before the build is declared failed. A resumable failure (e.g. the load pod
	// was evicted) resumes from the loader's checkpoints on the kept volumes.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=20
	// +optional
	BuildAttempts int32 `json:"buildAttempts,omitempty"`

	// backoff is the wait before the second build attempt (a new workflow); each
	// further attempt waits twice as long, up to maxBackoff. Retries inside a workflow
	// (limit) start at once.
	// +kubebuilder:default="30s"
	// +optional
	Backoff metav1.Duration `json:"backoff,omitempty"`

	// maxBackoff caps the wait between build attempts.
	// +kubebuilder:default="10m"
	// +optional
	MaxBackoff metav1.Duration `json:"maxBackoff,omitempty"`

	// keepFailedVolumesFor is how long the volumes of a build that failed with
	// resumable work are kept (a full disk, exit 5; the build deadline; a snapshot
	// timeout; retryable failures with no attempts left): a spec change that fixes the
	// failure starts a new attempt on them, which resumes from the loader's checkpoint.
	// They are deleted once it passes, when a build of another revision starts, or
	// with the BulkLoad. 0s deletes them at once.
	// +kubebuilder:default="24h"
	// +optional
	KeepFailedVolumesFor *metav1.Duration `json:"keepFailedVolumesFor,omitempty"`
}

// Phase is the coarse state of a BulkLoad.
// +kubebuilder:validation:Enum=Pending;Fetching;Loading;Validating;Snapshotting;HandingOff;Ready;Failed
type Phase string

const (
	PhasePending      Phase = "Pending"
	PhaseFetching     Phase = "Fetching"
	PhaseLoading      Phase = "Loading"
	PhaseValidating   Phase = "Validating"
	PhaseSnapshotting Phase = "Snapshotting"
	// PhaseHandingOff: the serving workload is being pointed at (or rolls out onto)
	// the database it should serve.
	PhaseHandingOff Phase = "HandingOff"
	PhaseReady      Phase = "Ready"
	PhaseFailed     Phase = "Failed"
)

// Condition types: Ready, Reconciling and Stalled in kstatus form (Flux and kstatus read
// them; the chart's Argo CD health check too), and Building.
const (
	// ConditionReady is True while the database the spec asks for is served: the newest
	// snapshot (or the one spec.serving.snapshotName pins) of a revision built from the
	// spec's current source, database, loader, fetch and validate settings, handed off and
	// rolled out (without spec.serving: ready to use). It stays True while a newer dump set
	// (watch mode) or a trigger.rebuild is built, since the served database is still the one
	// the spec asks for; it is False while nothing is served yet, after a change to those
	// settings until their database is served, and while a handoff rolls out or drifted.
	ConditionReady = "Ready"
	// ConditionReconciling is True while the operator works towards what the spec asks and
	// it is not served yet (kstatus: InProgress): a first build, a build after a spec change,
	// a handoff rolling out. A build while Ready is True leaves it False (see Building).
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when the operator cannot make progress without a change:
	// an invalid spec, a final build failure, a source that refuses access or is
	// misconfigured, a missing API. The database served before, if any, stays served
	// (Ready says so).
	ConditionStalled = "Stalled"
	// ConditionBuilding is True while a build of a revision is under way (an attempt, or
	// the backoff before the next), whether or not a database is served meanwhile; its
	// reason and message are the build's.
	ConditionBuilding = "Building"
)

// BulkLoadStatus is the observed state of a BulkLoad.
type BulkLoadStatus struct {
	// phase is the coarse state: Pending, Fetching, Loading, Validating, Snapshotting, HandingOff, Ready or Failed.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// conditions: Ready, Reconciling, Stalled, Building.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// sourceRevision identifies the dump set being built.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	SourceRevision string `json:"sourceRevision,omitempty"`

	// queuedRevision is a newer dump set that arrived during a build; it is built next.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	QueuedRevision string `json:"queuedRevision,omitempty"`

	// lastBuiltRevision identifies the dump set of the current snapshot.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	LastBuiltRevision string `json:"lastBuiltRevision,omitempty"`

	// lastFailedRevision is a revision whose build failed finally; it is not built
	// again until the revision changes, or a spec change alters what the failure
	// depends on (lastFailure.specDigest), which starts a new attempt of it.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	LastFailedRevision string `json:"lastFailedRevision,omitempty"`

	// keptVolumes are the build volumes of a failed build kept for the next attempt
	// (spec.retry.keepFailedVolumesFor).
	// +optional
	KeptVolumes *KeptVolumes `json:"keptVolumes,omitempty"`

	// workflow refers to the Argo Workflow of the current (or last) build.
	// +optional
	Workflow *WorkflowReference `json:"workflow,omitempty"`

	// attempt counts the workflows started for sourceRevision (1 = first).
	// +optional
	Attempt int32 `json:"attempt,omitempty"`

	// attemptsBeforeFix is the number of those workflows started before the spec
	// change that last restarted a failed build: retry.buildAttempts counts the
	// attempts after it.
	// +optional
	AttemptsBeforeFix int32 `json:"attemptsBeforeFix,omitempty"`

	// retryAfter is when the next attempt of a failed, retryable build starts.
	// +optional
	RetryAfter *metav1.Time `json:"retryAfter,omitempty"`

	// buildStartTime is when the current build's first workflow was created.
	// +optional
	BuildStartTime *metav1.Time `json:"buildStartTime,omitempty"`

	// lastFailure describes the last failed step.
	// +optional
	LastFailure *BuildFailure `json:"lastFailure,omitempty"`

	// currentSnapshot is the VolumeSnapshot of the newest built database.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	CurrentSnapshot string `json:"currentSnapshot,omitempty"`

	// snapshots is the short history of retained snapshots, newest first.
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +optional
	Snapshots []SnapshotRecord `json:"snapshots,omitempty"`

	// servingClaim is the PVC handed to the serving workload.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ServingClaim string `json:"servingClaim,omitempty"`

	// servedSnapshot is the snapshot servingClaim was restored from: currentSnapshot,
	// or spec.serving.snapshotName while that pins an older one.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ServedSnapshot string `json:"servedSnapshot,omitempty"`

	// load holds the figures of the newest successful load.
	// +optional
	Load *LoadFigures `json:"load,omitempty"`

	// source is what the last listing of the source saw (trigger.mode=watch).
	// +optional
	Source *SourceObservation `json:"source,omitempty"`
}

// WorkflowReference names an Argo Workflow in the BulkLoad's namespace.
type WorkflowReference struct {
	// name of the Workflow.
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// phase of the Workflow as last observed (Pending, Running, Succeeded, Failed, Error).
	// A finished phase is the durable record of the attempt's outcome: a Workflow
	// deleted afterwards (its TTL, argo delete) is not run again.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Phase string `json:"phase,omitempty"`
	// finishedAt is when the Workflow finished.
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// load holds the figures of the load step's report, recorded when the Workflow
	// succeeded (it may be gone before the snapshot is ready).
	// +optional
	Load *LoadFigures `json:"load,omitempty"`
}

// SourceObservation is what the last listing of the source (trigger.mode=watch) saw.
// It paces the listings (one per trigger.interval) and keeps the settle clock
// across operator restarts.
type SourceObservation struct {
	// lastListTime is when the source was last listed (successfully or not).
	// +optional
	LastListTime *metav1.Time `json:"lastListTime,omitempty"`
	// observedGeneration is the BulkLoad generation of that listing; a newer spec
	// lists again at once.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// fingerprint identifies the listing (objects, sizes, ETags, marker, manifest).
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Fingerprint string `json:"fingerprint,omitempty"`
	// unchangedSince is when the listing last changed: the start of the settle period.
	// +optional
	UnchangedSince *metav1.Time `json:"unchangedSince,omitempty"`
	// revision is the complete dump set that has settled ("" while incomplete,
	// settling or unlisted).
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Revision string `json:"revision,omitempty"`
	// reason is SourceIncomplete, SourceSettling, SourceSettled or SourceUnavailable.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Reason string `json:"reason,omitempty"`
	// message explains the reason.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`
}

// BuildFailure describes a failed build step.
type BuildFailure struct {
	// step that failed: fetch, load, validate or snapshot.
	// +kubebuilder:validation:MaxLength=32
	Step string `json:"step"`
	// exitCode of the step's container, when it exited.
	// +optional
	ExitCode *int32 `json:"exitCode,omitempty"`
	// reason is a CamelCase summary such as BadInput or TransientIO.
	// +kubebuilder:validation:MaxLength=64
	Reason string `json:"reason"`
	// message from the workflow.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`
	// retryable says whether the failure class may succeed on retry.
	Retryable bool `json:"retryable"`
	// specDigest is a digest of the spec parts the failed step ran with and that
	// could fix it (docs/failures-and-retries.md); a spec change that alters it starts
	// a new attempt of the same revision. Empty when no spec change can.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	SpecDigest string `json:"specDigest,omitempty"`
	// node is the node the failed attempt lost (reason NodeLost).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Node string `json:"node,omitempty"`
}

// KeptVolumes are the build volumes of a failed build, kept so that the next attempt
// of the same revision resumes on them.
type KeptVolumes struct {
	// revision whose build volumes are kept.
	// +kubebuilder:validation:MaxLength=256
	Revision string `json:"revision"`
	// claims are the kept PersistentVolumeClaims.
	// +kubebuilder:validation:MaxItems=4
	// +listType=atomic
	// +optional
	Claims []string `json:"claims,omitempty"`
	// until is when they are deleted unless an attempt has started on them.
	Until metav1.Time `json:"until"`
}

// SnapshotRecord is one retained database snapshot.
type SnapshotRecord struct {
	// name of the VolumeSnapshot.
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// revision of the dump set it holds.
	// +kubebuilder:validation:MaxLength=256
	Revision string `json:"revision"`
	// creationTime of the snapshot.
	CreationTime metav1.Time `json:"creationTime"`
	// triples in the database.
	// +optional
	Triples int64 `json:"triples,omitempty"`
}

// LoadFigures are the loader's report of a successful load.
type LoadFigures struct {
	// triples loaded into the default graph.
	Triples int64 `json:"triples"`
	// quads loaded into named graphs.
	Quads int64 `json:"quads"`
	// rejects is the number of bad input lines skipped (skip policy).
	Rejects int64 `json:"rejects"`
	// duration of the load step.
	Duration metav1.Duration `json:"duration"`
	// triplesPerSecond is (triples + quads) / duration.
	TriplesPerSecond int64 `json:"triplesPerSecond"`
	// databaseBytes is the size of the built database.
	DatabaseBytes int64 `json:"databaseBytes"`
	// resumedAfter is the checkpoint (parse, nodes, indexes (...)) an earlier attempt of
	// the build left and this load resumed after, instead of starting over.
	// +optional
	ResumedAfter string `json:"resumedAfter,omitempty"`
	// report is where the load step left the full build report (every input and fetched
	// object) on the build's data volume; the same report is bulkload-report.json inside
	// the database and its snapshot.
	// +optional
	Report string `json:"report,omitempty"`
}

// BulkLoad builds an RDF database (Apache Jena TDB2) from dump files in object
// storage, snapshots it and hands it to a query workload.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=bl,categories=rdf
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Triples",type=integer,JSONPath=`.status.load.triples`
// +kubebuilder:printcolumn:name="Snapshot",type=string,JSONPath=`.status.currentSnapshot`
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.lastBuiltRevision`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 40",message="metadata.name must be at most 40 characters so that the names of workflows, volumes and snapshots derived from it fit"
type BulkLoad struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec BulkLoadSpec `json:"spec"`

	// +optional
	Status BulkLoadStatus `json:"status,omitempty"`
}

// BulkLoadList is a list of BulkLoads.
//
// +kubebuilder:object:root=true
type BulkLoadList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BulkLoad `json:"items"`
}
