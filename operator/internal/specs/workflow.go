package specs

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
)

// Paths inside the build pods. The loader contract fixes /data/db, /data/input,
// /scratch/tmp, /data/report.json, /data/summary.json and /data/rejects.jsonl.
const (
	DataMountPath    = "/data"
	ScratchMountPath = "/scratch"
	InputPath        = "/data/input"
	DatabasePath     = "/data/db"
	ReportPath       = "/data/report.json"
	SummaryPath      = "/data/summary.json"
	RejectsPath      = "/data/rejects.jsonl"
	LoaderTmpPath    = "/scratch/tmp"
	FetchDestPath    = "/scratch/input"
	FetchReportPath  = "/scratch/fetch-report.json"
	CAMountPath      = "/etc/rdf-bulkload/ca"
	CAFileName       = "ca.crt"

	// SummaryParameter is the load step's output parameter: the loader's summary
	// (--summary), the figures the operator records and the full report's path. Not the
	// full report: an output parameter is stored in the Workflow, which etcd caps.
	SummaryParameter = "summary"
	// LegacyReportParameter is the load step's output parameter in workflows written by
	// operators before SummaryParameter: the whole report.json, whose figures have the
	// summary's names. Read only when a workflow has no summary (a build that an upgrade of
	// the operator found running).
	LegacyReportParameter = "report"

	volumeData    = "data"
	volumeScratch = "scratch"
	volumeTmp     = "tmp"
	volumeCA      = "ca"

	// inputSubPath is where fetch writes on the scratch volume and what the load
	// step mounts at /data/input, so the inputs never land in the database snapshot.
	inputSubPath = "input"

	// NonRootUID runs every build container; fsGroup makes the volumes writable to it.
	NonRootUID int64 = 65532

	entrypointTemplate = "build"
)

// Images are the container images of the build steps and their pull policy.
type Images struct {
	Fetch    string
	Loader   string
	Validate string
	// PullPolicy of the load and validate images; empty leaves it to Kubernetes.
	PullPolicy corev1.PullPolicy
	// FetchPullPolicy of the fetch image; empty leaves it to Kubernetes.
	FetchPullPolicy corev1.PullPolicy
}

// ResolveImages fills the spec's images and pull policies (loader.imagePullPolicy,
// fetch.imagePullPolicy) from the operator's defaults.
func ResolveImages(bl *rdfv1.BulkLoad, defaultFetch, defaultLoader string, defaultPullPolicy corev1.PullPolicy) Images {
	im := Images{Fetch: bl.Spec.Fetch.Image, Loader: bl.Spec.Loader.Image, Validate: bl.Spec.Validate.Image,
		PullPolicy: bl.Spec.Loader.ImagePullPolicy, FetchPullPolicy: bl.Spec.Fetch.ImagePullPolicy}
	if im.PullPolicy == "" {
		im.PullPolicy = defaultPullPolicy
	}
	if im.FetchPullPolicy == "" {
		im.FetchPullPolicy = defaultPullPolicy
	}
	if im.Fetch == "" {
		im.Fetch = defaultFetch
	}
	if im.Loader == "" {
		im.Loader = defaultLoader
	}
	if im.Validate == "" {
		im.Validate = im.Loader
	}
	return im
}

// BuildParams identify one build attempt.
type BuildParams struct {
	Revision string
	Attempt  int32
	Images   Images
	// ExpectRevision, when set, makes the fetch step refuse a dump set whose listing
	// digest differs (the source changed between resolving and fetching).
	ExpectRevision string
	// StepMetricsLinger keeps the fetch and load steps' metrics endpoints up this long after
	// the step's work ends (--metrics-linger), so that a step shorter than a scrape interval
	// is still scraped with its final figures.
	StepMetricsLinger time.Duration
	// ArgoInstanceID, when set, is the instanceID of the workflow-controller that is to run
	// the workflow (LabelArgoInstanceID); empty leaves the label out, as a controller
	// without an instanceID requires.
	ArgoInstanceID string
	// ArtifactRepository, when set, is the artifact repository (a ConfigMap key in the
	// BulkLoad's namespace) the workflow uses instead of the controller's default: a default
	// that archives logs with credentials in another namespace leaves every step pod waiting
	// for that Secret (the builds write no artifacts).
	ArtifactRepository *wfv1.ArtifactRepositoryRef
}

// ParseArtifactRepositoryRef reads CONFIGMAP/KEY (--argo-artifact-repository); "" is none.
func ParseArtifactRepositoryRef(ref string) (*wfv1.ArtifactRepositoryRef, error) {
	if ref == "" {
		return nil, nil
	}
	configMap, key, ok := strings.Cut(ref, "/")
	if !ok || configMap == "" || key == "" || strings.Contains(key, "/") {
		return nil, fmt.Errorf("%q is not CONFIGMAP/KEY", ref)
	}
	return &wfv1.ArtifactRepositoryRef{ConfigMap: configMap, Key: key}, nil
}

// LabelArgoInstanceID is Argo's label (workflow/common.LabelKeyControllerInstanceID) by which a
// workflow-controller configured with an instanceID picks the Workflows it runs: it ignores
// those whose label differs or is missing, and one without an instanceID ignores labelled ones.
const LabelArgoInstanceID = "workflows.argoproj.io/controller-instanceid"

// Workflow builds the Argo Workflow of one build attempt: fetch → load → validate on
// the revision's data and scratch volumes. The snapshot is taken by the controller
// once the workflow has succeeded.
func Workflow(bl *rdfv1.BulkLoad, p BuildParams) *wfv1.Workflow {
	labels := childLabels(bl, p.Revision, RoleBuild)
	labels[LabelAttempt] = strconv.Itoa(int(p.Attempt))
	if p.ArgoInstanceID != "" {
		labels[LabelArgoInstanceID] = p.ArgoInstanceID
	}

	volumes := []corev1.Volume{
		claimVolume(volumeData, DataClaimName(bl, p.Revision)),
		claimVolume(volumeScratch, ScratchClaimName(bl, p.Revision)),
		// Read-only root filesystems still need a writable /tmp (JVM, TLS libraries).
		{Name: volumeTmp, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	if ca := caVolume(&bl.Spec.Source); ca != nil {
		volumes = append(volumes, *ca)
	}

	build := &bl.Spec.Build
	wf := &wfv1.Workflow{
		TypeMeta: metav1.TypeMeta{APIVersion: wfv1.SchemeGroupVersion.String(), Kind: "Workflow"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            WorkflowName(bl, p.Revision, p.Attempt),
			Namespace:       bl.Namespace,
			Labels:          labels,
			Annotations:     childAnnotations(p.Revision),
			OwnerReferences: []metav1.OwnerReference{ControllerReference(bl)},
		},
		Spec: wfv1.WorkflowSpec{
			Entrypoint:            entrypointTemplate,
			ServiceAccountName:    bl.Spec.ServiceAccountName,
			ArtifactRepositoryRef: p.ArtifactRepository.DeepCopy(),
			SecurityContext:       podSecurityContext(),
			// Argo adds its init and wait containers without a security context; the
			// patch, applied after they are added, makes the pods pass "restricted".
			PodSpecPatch: ExecutorPodSpecPatch(),
			// Every step pod runs where the build volumes can be: the fetch pod binds
			// them (WaitForFirstConsumer) on a node these constraints allow.
			NodeSelector: maps.Clone(build.NodeSelector),
			Tolerations:  slices.Clone(build.Tolerations),
			Affinity:     buildAffinity(bl),
			// Workflow-level, so that every step pod gets them; the templates' own
			// metadata (metricsMetadata) is applied after it by Argo.
			PodMetadata:          buildPodMetadata(bl, p.Revision),
			PodPriorityClassName: build.PriorityClassName,
			// A build that cannot finish (pods never scheduled, a hung step) ends.
			ActiveDeadlineSeconds: ptr.To(int64(build.EffectiveDeadline() / time.Second)),
			// Both set explicitly, so that the workflow-controller's workflowDefaults do
			// not apply. Failed pods stay for their logs (podGC); the controller deletes
			// old workflows itself. The TTLs only bound what an operator that is gone
			// leaves behind: the controller records an attempt's outcome in the
			// BulkLoad's status when it sees it finish (seconds later) and never runs a
			// recorded attempt again, so a deleted workflow is harmless once seen.
			PodGC:       &wfv1.PodGC{Strategy: wfv1.PodGCOnPodSuccess},
			TTLStrategy: WorkflowTTL(),
			Volumes:     volumes,
			Templates: []wfv1.Template{
				{
					Name: entrypointTemplate,
					Steps: []wfv1.ParallelSteps{
						{Steps: []wfv1.WorkflowStep{{Name: StepFetch, Template: StepFetch}}},
						{Steps: []wfv1.WorkflowStep{{Name: StepLoad, Template: StepLoad}}},
						{Steps: []wfv1.WorkflowStep{{Name: StepValidate, Template: StepValidate}}},
					},
				},
				fetchTemplate(bl, p),
				loadTemplate(bl, p),
				validateTemplate(bl, p.Images),
			},
		},
	}
	return wf
}

// stepTerminationMessage: a failed step's log tail becomes its termination message, which Argo
// puts in the node message, so the reason it printed (file:line:column, the numbers) reaches the
// BulkLoad's status.
const stepTerminationMessage = corev1.TerminationMessageFallbackToLogsOnError

func fetchTemplate(bl *rdfv1.BulkLoad, p BuildParams) wfv1.Template {
	images, expectRevision := p.Images, p.ExpectRevision
	src := &bl.Spec.Source
	args := []string{"--endpoint", src.Endpoint, "--bucket", src.Bucket}
	if src.Prefix != "" {
		args = append(args, "--prefix", src.Prefix)
	}
	for _, k := range src.Keys {
		args = append(args, "--key", k)
	}
	for _, g := range src.Include {
		args = append(args, "--include", g)
	}
	if c := src.Completion; c != nil {
		switch {
		case c.Marker != "":
			args = append(args, "--marker", c.Marker)
		case c.Manifest != nil:
			args = append(args, "--manifest", c.Manifest.Key)
		}
	}
	mounts := []corev1.VolumeMount{
		{Name: volumeScratch, MountPath: ScratchMountPath},
		// Not written by fetch: mounted so that the first pod of the build uses both
		// volumes, and a WaitForFirstConsumer class binds them on the same node.
		{Name: volumeData, MountPath: DataMountPath, ReadOnly: true},
		{Name: volumeTmp, MountPath: "/tmp"},
	}
	if src.CASecretRef != nil || src.CAConfigMapRef != nil {
		args = append(args, "--ca-file", CAMountPath+"/"+CAFileName)
		mounts = append(mounts, corev1.VolumeMount{Name: volumeCA, MountPath: CAMountPath, ReadOnly: true})
	}
	if src.InsecureSkipTLSVerify {
		args = append(args, "--insecure")
	}
	if expectRevision != "" {
		args = append(args, "--expect-revision", expectRevision)
	}
	args = append(args, "--build-revision", ShortRevision(p.Revision),
		"--dest", FetchDestPath, "--report", FetchReportPath, "--metrics-addr", stepMetricsAddr)
	if p.StepMetricsLinger > 0 {
		args = append(args, "--metrics-linger", p.StepMetricsLinger.String())
	}

	c := &corev1.Container{
		TerminationMessagePolicy: stepTerminationMessage,
		Name:                     "main",
		Image:                    images.Fetch,
		ImagePullPolicy:          images.FetchPullPolicy,
		Command:                  []string{"rdf-bulkload-fetch"},
		Args:                     args,
		Env:                      credentialsEnv(src.CredentialsSecretRef),
		Resources:                BindingStepResources(bl.Spec.Fetch.EffectiveResources(), bl.Spec.Loader.Resources, validateResources(bl)),
		Ports:                    metricsPorts(),
		VolumeMounts:             mounts,
		SecurityContext:          containerSecurityContext(),
	}
	return wfv1.Template{Name: StepFetch, Container: c, Metadata: metricsMetadata(bl, p.Revision), RetryStrategy: retryStrategy(bl, StepFetch)}
}

// Annotations the build pods get unless spec.build.podMetadata sets them: autoscalers
// must not drain a node for a build pod. Evicting the load step loses the work since the
// loader's last checkpoint (hours on a large load), and removing the node loses a
// node-local volume with the whole build. Set on every step, as the build's volumes pin
// all of them to one node.
var BuildPodDefaultAnnotations = map[string]string{
	"karpenter.sh/do-not-disrupt":                    "true",
	"cluster-autoscaler.kubernetes.io/safe-to-evict": "false",
}

// buildPodMetadata is the metadata of every build pod: the user's labels under the
// operator's (which select the pods: the PodMonitor, exclusiveNode's anti-affinity),
// the default annotations under the user's.
func buildPodMetadata(bl *rdfv1.BulkLoad, revision string) *wfv1.Metadata {
	md := &wfv1.Metadata{Labels: map[string]string{}, Annotations: maps.Clone(BuildPodDefaultAnnotations)}
	if pm := bl.Spec.Build.PodMetadata; pm != nil {
		maps.Copy(md.Labels, pm.Labels)
		maps.Copy(md.Annotations, pm.Annotations)
	}
	maps.Copy(md.Labels, childLabels(bl, revision, RoleBuild))
	return md
}

// buildAffinity is spec.build.affinity, plus with spec.build.exclusiveNode a required
// anti-affinity, by node, to the build pods of every other BulkLoad in every namespace
// (the pods of this one share the node by design: its volumes pin them there).
// Required anti-affinity is symmetric in the scheduler: it also keeps other builds'
// pods off the node while one of this build's pods runs there.
func buildAffinity(bl *rdfv1.BulkLoad) *corev1.Affinity {
	aff := bl.Spec.Build.Affinity.DeepCopy()
	if !bl.Spec.Build.ExclusiveNode {
		return aff
	}
	if aff == nil {
		aff = &corev1.Affinity{}
	}
	if aff.PodAntiAffinity == nil {
		aff.PodAntiAffinity = &corev1.PodAntiAffinity{}
	}
	aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
		corev1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{LabelManagedBy: ManagedBy, LabelRole: RoleBuild},
				MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: LabelBulkLoadUID, Operator: metav1.LabelSelectorOpNotIn, Values: []string{string(bl.UID)}},
				},
			},
			NamespaceSelector: &metav1.LabelSelector{},
			TopologyKey:       corev1.LabelHostname,
		})
	return aff
}

// BindingStepResources are the resources of the fetch step, the first pod that mounts
// the build volumes: with a WaitForFirstConsumer class the scheduler binds them to the
// node it picks for that pod, and every later step must run there. So the pod asks for
// at least what each later step requests (CPU, memory, ephemeral storage; a limit set
// without a request counts as one, as Kubernetes defaults it), and the node it lands on
// fits the load. A fetch limit below the raised request is raised to it.
func BindingStepResources(fetch corev1.ResourceRequirements, later ...corev1.ResourceRequirements) corev1.ResourceRequirements {
	out := *fetch.DeepCopy()
	for _, step := range later {
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
			need, have := effectiveRequest(step, name), effectiveRequest(out, name)
			if need.IsZero() || have.Cmp(need) >= 0 {
				continue
			}
			if out.Requests == nil {
				out.Requests = corev1.ResourceList{}
			}
			out.Requests[name] = need.DeepCopy()
			if lim, limited := out.Limits[name]; limited && lim.Cmp(need) < 0 {
				out.Limits[name] = need.DeepCopy()
			}
		}
	}
	return out
}

// effectiveRequest is what a container asks the scheduler for: its request, else its
// limit (the API server defaults the one to the other), else nothing.
func effectiveRequest(r corev1.ResourceRequirements, name corev1.ResourceName) resource.Quantity {
	if q, ok := r.Requests[name]; ok {
		return q
	}
	return r.Limits[name]
}

// LoaderArgs is the rdf-bulkload command line of the load step; metricsLinger > 0 keeps
// its metrics served that long after the load.
func LoaderArgs(bl *rdfv1.BulkLoad, metricsLinger time.Duration) []string {
	l := &bl.Spec.Loader
	args := []string{
		"load",
		"--loc", DatabasePath,
		"--tmpdir", LoaderTmpPath,
		"--memory", FormatBytes(l.EffectiveMemoryBudget()),
		"--threads", strconv.Itoa(int(l.EffectiveThreads())),
		"--on-error", string(l.EffectiveOnError()),
		"--jena", string(bl.Spec.Database.EffectiveJena()),
	}
	if l.EffectiveOnError() == rdfv1.OnErrorSkip {
		if l.MaxRejects != nil {
			args = append(args, "--max-rejects", strconv.FormatInt(*l.MaxRejects, 10))
		}
		args = append(args, "--rejects", RejectsPath)
	}
	// The fetch step's report rides along into the build report; the input directory is
	// passed whole (the loader loads every file below it, in name order).
	args = append(args, "--report", ReportPath, "--summary", SummaryPath, "--source-report", FetchReportPath, "--metrics-addr", stepMetricsAddr)
	if l.SkipPlanCheck {
		args = append(args, "--skip-plan-check")
	}
	if metricsLinger > 0 {
		// in seconds: the loader does not read Go's "1m0s"
		args = append(args, "--metrics-linger", strconv.FormatFloat(metricsLinger.Seconds(), 'f', -1, 64))
	}
	return append(args, InputPath)
}

// StepMetricsPort is where the fetch and load steps serve Prometheus metrics while they run
// (rdf_bulkload_fetch_*, rdf_bulkload_load_*: phase, bytes, rate, memory, temp disk).
const StepMetricsPort = 9184

var stepMetricsAddr = "0.0.0.0:" + strconv.Itoa(StepMetricsPort)

func metricsPorts() []corev1.ContainerPort {
	return []corev1.ContainerPort{{Name: "metrics", ContainerPort: StepMetricsPort, Protocol: corev1.ProtocolTCP}}
}

// metricsMetadata marks a step's pod for Prometheus: the annotations for annotation-based pod
// discovery, the labels for the chart's PodMonitor (which selects managed-by and role, and
// copies the BulkLoad's name into the metrics' bulkload label).
func metricsMetadata(bl *rdfv1.BulkLoad, revision string) wfv1.Metadata {
	return wfv1.Metadata{Labels: childLabels(bl, revision, RoleBuild), Annotations: map[string]string{
		"prometheus.io/scrape": "true",
		"prometheus.io/port":   strconv.Itoa(StepMetricsPort),
		"prometheus.io/path":   "/metrics",
	}}
}

func loadTemplate(bl *rdfv1.BulkLoad, p BuildParams) wfv1.Template {
	images := p.Images
	// No shell: the loader creates --tmpdir itself and takes the input directory as is.
	c := &corev1.Container{
		TerminationMessagePolicy: stepTerminationMessage,
		Name:                     "main",
		Image:                    images.Loader,
		ImagePullPolicy:          images.PullPolicy,
		Command:                  []string{"rdf-bulkload"},
		Args:                     LoaderArgs(bl, p.StepMetricsLinger),
		Resources:                *bl.Spec.Loader.Resources.DeepCopy(),
		Ports:                    metricsPorts(),
		VolumeMounts: []corev1.VolumeMount{
			{Name: volumeData, MountPath: DataMountPath},
			{Name: volumeScratch, MountPath: InputPath, SubPath: inputSubPath, ReadOnly: true},
			{Name: volumeScratch, MountPath: ScratchMountPath},
			{Name: volumeTmp, MountPath: "/tmp"},
		},
		SecurityContext: containerSecurityContext(),
	}
	return wfv1.Template{
		Name:      StepLoad,
		Container: c,
		Metadata:  metricsMetadata(bl, p.Revision),
		Outputs: wfv1.Outputs{Parameters: []wfv1.Parameter{{
			Name:      SummaryParameter,
			ValueFrom: &wfv1.ValueFrom{Path: SummaryPath},
		}}},
		RetryStrategy: retryStrategy(bl, StepLoad),
	}
}

// validateResources are the validate step's resources: its own, else the loader's.
func validateResources(bl *rdfv1.BulkLoad) corev1.ResourceRequirements {
	res := bl.Spec.Validate.Resources.DeepCopy()
	if len(res.Limits) == 0 && len(res.Requests) == 0 {
		res = bl.Spec.Loader.Resources.DeepCopy()
	}
	return *res
}

func validateTemplate(bl *rdfv1.BulkLoad, images Images) wfv1.Template {
	res := validateResources(bl)
	c := &corev1.Container{
		TerminationMessagePolicy: stepTerminationMessage,
		Name:                     "main",
		Image:                    images.Validate,
		ImagePullPolicy:          images.PullPolicy,
		Command:                  []string{"rdf-bulkload-validate"},
		Args:                     []string{"--loc", DatabasePath},
		Resources:                res,
		VolumeMounts: []corev1.VolumeMount{
			// Jena takes a lock file in the database directory, so not read-only.
			{Name: volumeData, MountPath: DataMountPath},
			{Name: volumeTmp, MountPath: "/tmp"},
		},
		SecurityContext: containerSecurityContext(),
	}
	return wfv1.Template{Name: StepValidate, Container: c, RetryStrategy: retryStrategy(bl, StepValidate)}
}

// RetryExpression is the Argo retry condition of a step: pod errors (evicted,
// node lost) and the step's retryable exit codes; final codes stop at once, and so
// does a pod the API server refused (admission: Pod Security, LimitRange, a
// webhook; or an invalid pod), which would be refused again. lastRetry.message exists
// from Argo Workflows v3.5.0 on, which makes v3.5 the oldest release the operator supports.
func RetryExpression(step string) string {
	codes := retryableCodes(step)
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = strconv.Itoa(int(c))
	}
	rejected := make([]string, len(PodRejectedMarkers))
	for i, m := range PodRejectedMarkers {
		rejected[i] = fmt.Sprintf("lastRetry.message contains %q", m)
	}
	return fmt.Sprintf(`(lastRetry.status == "Error" && !(%s)) || asInt(lastRetry.exitCode) in [%s]`,
		strings.Join(rejected, " || "), strings.Join(parts, ", "))
}

// PodRejectedMarkers are the parts of the message Argo records on a step whose pod
// the API server refused to create: `pods "x" is forbidden: violates PodSecurity ...`
// (also LimitRange), `admission webhook "w" denied the request: ...`, or
// `Pod "x" is invalid: ...` (e.g. a malformed toleration from spec.build). A
// ResourceQuota refusal never gets here: Argo takes it as transient and leaves the
// step Pending until there is quota (workflow/controller requeueIfTransientErr).
var PodRejectedMarkers = []string{"is forbidden:", "denied the request", "is invalid:"}

// IsPodRejected says whether a step's failure message is the API server refusing its
// pod; it agrees with the retry expression, which does not retry such a step.
func IsPodRejected(message string) bool {
	for _, m := range PodRejectedMarkers {
		if strings.Contains(message, m) {
			return true
		}
	}
	return false
}

// Workflow TTLs (WorkflowTTL): a succeeded workflow holds nothing the status does
// not (its pods are gone, its report is recorded); a failed one holds the failed
// pods' logs, kept a week for diagnosis.
const (
	WorkflowTTLAfterSuccess = 24 * time.Hour
	WorkflowTTLAfterFailure = 7 * 24 * time.Hour
)

// WorkflowTTL is the build workflow's ttlStrategy.
func WorkflowTTL() *wfv1.TTLStrategy {
	return &wfv1.TTLStrategy{
		SecondsAfterSuccess: ptr.To(int32(WorkflowTTLAfterSuccess / time.Second)),
		SecondsAfterFailure: ptr.To(int32(WorkflowTTLAfterFailure / time.Second)),
	}
}

// retryStrategy retries a step inside its workflow, at once and without a backoff:
// Argo v4 (workflow/controller operator.go processNodeRetries) waits the backoff
// before it evaluates the retry policy and expression, so with a backoff a final
// exit code would wait one too. The retried failures are pod losses (evicted, node
// gone), for which a new pod at once is right, and exit codes 6 and 75, which the
// tools return after their own retries; the wait between attempts is the
// controller's (spec.retry.backoff, between workflows).
func retryStrategy(bl *rdfv1.BulkLoad, step string) *wfv1.RetryStrategy {
	limit := bl.Spec.Retry.Limit
	if limit < 0 {
		limit = 0
	}
	return &wfv1.RetryStrategy{
		Limit:       ptr.To(intstr.FromInt32(limit)),
		RetryPolicy: wfv1.RetryPolicyAlways,
		Expression:  RetryExpression(step),
	}
}

func credentialsEnv(ref *rdfv1.CredentialsSecretReference) []corev1.EnvVar {
	if ref == nil {
		return nil
	}
	idKey, secretKey := ref.AccessKeyIDKey, ref.SecretAccessKeyKey
	if idKey == "" {
		idKey = "AWS_ACCESS_KEY_ID"
	}
	if secretKey == "" {
		secretKey = "AWS_SECRET_ACCESS_KEY"
	}
	from := func(key string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name},
			Key:                  key,
		}}
	}
	return []corev1.EnvVar{
		{Name: "AWS_ACCESS_KEY_ID", ValueFrom: from(idKey)},
		{Name: "AWS_SECRET_ACCESS_KEY", ValueFrom: from(secretKey)},
	}
}

func caVolume(src *rdfv1.SourceSpec) *corev1.Volume {
	key := func(r *rdfv1.KeyReference) []corev1.KeyToPath {
		k := r.Key
		if k == "" {
			k = CAFileName
		}
		return []corev1.KeyToPath{{Key: k, Path: CAFileName}}
	}
	switch {
	case src.CASecretRef != nil:
		return &corev1.Volume{Name: volumeCA, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: src.CASecretRef.Name, Items: key(src.CASecretRef),
		}}}
	case src.CAConfigMapRef != nil:
		return &corev1.Volume{Name: volumeCA, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: src.CAConfigMapRef.Name}, Items: key(src.CAConfigMapRef),
		}}}
	}
	return nil
}

func claimVolume(name, claim string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
	}}
}

func podSecurityContext() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:        ptr.To(true),
		RunAsUser:           ptr.To(NonRootUID),
		RunAsGroup:          ptr.To(NonRootUID),
		FSGroup:             ptr.To(NonRootUID),
		FSGroupChangePolicy: ptr.To(corev1.FSGroupChangeOnRootMismatch),
		SeccompProfile:      &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// Names of the containers Argo puts into every step pod next to "main" (Argo v4:
// workflow/common InitContainerName, WaitContainerName, MainContainerName).
const (
	ArgoInitContainer = "init"
	ArgoWaitContainer = "wait"
	ArgoMainContainer = "main"
)

// ExecutorPodSpecPatch is the workflow's podSpecPatch: Argo (workflow/controller
// workflowpod.go, createWorkflowPod) builds each step pod, adds its "init" and "wait"
// containers with the executor's security context (none unless the controller's
// config sets one), then strategic-merges this patch into the pod spec. Containers
// merge by name, so it gives those containers, and "main", what the "restricted"
// Pod Security Standard asks of every container: allowPrivilegeEscalation false, all
// capabilities dropped, non-root, RuntimeDefault seccomp (the last two also come from
// the pod's security context). It names only containers every step pod has: a name
// missing from the pod would be added as a container without an image.
func ExecutorPodSpecPatch() string {
	type containerPatch struct {
		Name            string                  `json:"name"`
		SecurityContext *corev1.SecurityContext `json:"securityContext"`
	}
	sc := func(name string) containerPatch {
		return containerPatch{Name: name, SecurityContext: restrictedSecurityContext()}
	}
	patch := struct {
		InitContainers []containerPatch `json:"initContainers"`
		Containers     []containerPatch `json:"containers"`
	}{
		InitContainers: []containerPatch{sc(ArgoInitContainer)},
		Containers:     []containerPatch{sc(ArgoWaitContainer), sc(ArgoMainContainer)},
	}
	// Marshalling plain structs cannot fail.
	data, _ := json.Marshal(patch)
	return string(data)
}

// restrictedSecurityContext is what the "restricted" Pod Security Standard requires of
// a container, without readOnlyRootFilesystem (Argo's executor containers are not
// known to work with it, see argoproj/argo-workflows#10787).
func restrictedSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func containerSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr.To(true),
		ReadOnlyRootFilesystem:   ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// FormatBytes writes a byte count the way the loader's --memory flag reads it (the size
// grammar of docs/exit-codes.md's programs, see fetch.ParseSize): the largest binary unit
// that divides it exactly (8GiB, 1536MiB), else plain bytes (4097). Binary units only, so
// the value means the same to loaders from before and after "64M" became 64·10^6.
func FormatBytes(n int64) string {
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d%s", n/u.size, u.suffix)
		}
	}
	return strconv.FormatInt(n, 10)
}

// ControllerReference makes the BulkLoad the controlling owner of a child, so the
// child is garbage-collected with it and its changes wake the controller.
func ControllerReference(bl *rdfv1.BulkLoad) metav1.OwnerReference {
	gvk := rdfv1.GroupVersion.WithKind("BulkLoad")
	return metav1.OwnerReference{
		APIVersion:         gvk.GroupVersion().String(),
		Kind:               gvk.Kind,
		Name:               bl.Name,
		UID:                bl.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
}
