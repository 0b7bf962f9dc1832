// Command manager runs the rdf-bulkload operator: the BulkLoad controller, its
// metrics endpoint and health probes.
package main

import (
	"cmp"
	"flag"
	"os"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/controller"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/managermetrics"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
)

// Scheme knows every kind the operator reads or writes.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(rdfv1.AddToScheme(s))
	utilruntime.Must(wfv1.AddToScheme(s))
	utilruntime.Must(snapv1.AddToScheme(s))
	return s
}

func main() {
	var metricsAddr, metricsCertPath, probeAddr, fetchImage, loaderImage, pullPolicy string
	var leaderElect, metricsSecure bool
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8443", "address of the Prometheus metrics endpoint (0 disables it)")
	flag.BoolVar(&metricsSecure, "metrics-secure", true,
		"serve the metrics over HTTPS to clients whose token may get the nonResourceURL /metrics (false: plain HTTP, open to anyone who reaches the port)")
	flag.StringVar(&metricsCertPath, "metrics-cert-path", "",
		"directory with the metrics endpoint's tls.crt and tls.key, reloaded when they change (empty: a self-signed certificate)")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address of the /healthz and /readyz probes")
	flag.BoolVar(&leaderElect, "leader-elect", false, "elect a leader, so that only one replica reconciles")
	flag.StringVar(&fetchImage, "fetch-image", os.Getenv("RDF_BULKLOAD_FETCH_IMAGE"), "default image of the fetch step (the operator image ships rdf-bulkload-fetch)")
	flag.StringVar(&loaderImage, "loader-image", os.Getenv("RDF_BULKLOAD_LOADER_IMAGE"), "default loader image (rdf-bulkload, rdf-bulkload-validate)")
	flag.StringVar(&pullPolicy, "step-image-pull-policy", os.Getenv("RDF_BULKLOAD_STEP_IMAGE_PULL_POLICY"),
		"default pull policy of the build steps' images (Always, IfNotPresent, Never; empty: Kubernetes' default) unless a BulkLoad sets spec.loader.imagePullPolicy")
	var stepMetricsLinger string
	flag.StringVar(&stepMetricsLinger, "step-metrics-linger", os.Getenv("RDF_BULKLOAD_STEP_METRICS_LINGER"),
		"how long the fetch and load steps keep serving their metrics after their work ends, so that Prometheus scrapes their final figures (at least the scrape interval plus service discovery's delay; 0: none)")
	var workflowStartTimeout, argoInstanceID, argoArtifactRepository string
	flag.StringVar(&workflowStartTimeout, "workflow-start-timeout", os.Getenv("RDF_BULKLOAD_WORKFLOW_START_TIMEOUT"),
		"how long a build Workflow may go without a status from an Argo workflow-controller before its BulkLoad reports WorkflowNotStarted (empty: 2m)")
	flag.StringVar(&argoInstanceID, "argo-instance-id", os.Getenv("RDF_BULKLOAD_ARGO_INSTANCE_ID"),
		"the instanceID of the Argo workflow-controller that is to run the build Workflows: they are labelled workflows.argoproj.io/controller-instanceid with it (empty: unlabelled, for a controller without an instanceID)")
	flag.StringVar(&argoArtifactRepository, "argo-artifact-repository", os.Getenv("RDF_BULKLOAD_ARGO_ARTIFACT_REPOSITORY"),
		"CONFIGMAP/KEY: the artifact repository of the build Workflows (their spec.artifactRepositoryRef), a ConfigMap key in each BulkLoad's namespace, instead of the workflow-controller's default (empty): for a default that archives logs with credentials the BulkLoads' namespaces lack")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("setup")
	switch corev1.PullPolicy(pullPolicy) {
	case "", corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	default:
		log.Error(nil, "--step-image-pull-policy must be Always, IfNotPresent or Never", "value", pullPolicy)
		os.Exit(2)
	}
	linger, err := time.ParseDuration(cmp.Or(stepMetricsLinger, "0s"))
	if err != nil || linger < 0 {
		log.Error(err, "--step-metrics-linger must be a duration such as 20s", "value", stepMetricsLinger)
		os.Exit(2)
	}
	startTimeout, err := time.ParseDuration(cmp.Or(workflowStartTimeout, controller.DefaultWorkflowStartTimeout.String()))
	if err != nil || startTimeout <= 0 {
		log.Error(err, "--workflow-start-timeout must be a positive duration such as 2m", "value", workflowStartTimeout)
		os.Exit(2)
	}
	if errs := validation.IsValidLabelValue(argoInstanceID); len(errs) > 0 {
		// Argo's controller compares the label's value with its instanceID, and a label holds only a label value.
		log.Error(nil, "--argo-instance-id must be a valid label value", "value", argoInstanceID, "problems", errs)
		os.Exit(2)
	}
	artifactRepository, err := specs.ParseArtifactRepositoryRef(argoArtifactRepository)
	if err != nil {
		log.Error(err, "--argo-artifact-repository must be CONFIGMAP/KEY")
		os.Exit(2)
	}
	metricsOpts, err := managermetrics.ServerOptions(managermetrics.Options{BindAddress: metricsAddr, Secure: metricsSecure, CertPath: metricsCertPath})
	if err != nil {
		log.Error(err, "cannot configure the metrics endpoint")
		os.Exit(2)
	}

	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme: Scheme(),
		// Only the operator's own children are cached, not every Workflow, PVC and
		// VolumeSnapshot of the cluster.
		Cache:                  controller.CacheOptions(),
		Metrics:                metricsOpts,
		HealthProbeBindAddress: probeAddr,
		LeaderElection:         leaderElect,
		LeaderElectionID:       "rdf-bulkload-operator.rdf.bulkload.io",
	})
	if err != nil {
		log.Error(err, "cannot create the manager")
		os.Exit(1)
	}
	r := &controller.BulkLoadReconciler{
		Client:                 mgr.GetClient(),
		APIReader:              mgr.GetAPIReader(),
		Recorder:               mgr.GetEventRecorder("rdf-bulkload-operator"),
		DefaultFetchImage:      fetchImage,
		DefaultLoaderImage:     loaderImage,
		DefaultImagePullPolicy: corev1.PullPolicy(pullPolicy),
		StepMetricsLinger:      linger,
		WorkflowStartTimeout:   startTimeout,
		ArgoInstanceID:         argoInstanceID,
		ArgoArtifactRepository: artifactRepository,
		Resolver:               newSourceResolver(),
	}
	if err := r.SetupWithManager(mgr); err != nil {
		log.Error(err, "cannot set up the BulkLoad controller")
		os.Exit(1)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		log.Error(err, "cannot add the health check")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		log.Error(err, "cannot add the readiness check")
		os.Exit(1)
	}
	log.Info("starting", "metricsBindAddress", metricsAddr, "metricsSecure", metricsSecure, "fetchImage", fetchImage, "loaderImage", loaderImage, "stepImagePullPolicy", pullPolicy, "stepMetricsLinger", linger,
		"workflowStartTimeout", startTimeout, "argoInstanceID", argoInstanceID, "argoArtifactRepository", argoArtifactRepository)
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "manager stopped")
		os.Exit(1)
	}
}
