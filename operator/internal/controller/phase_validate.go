package controller

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

// validate checks what the schema cannot: that every step has an image and that
// watch mode has a resolver.
func (r *BulkLoadReconciler) validate(ctx context.Context, s *scope) error {
	switch {
	case s.images.Loader == "":
		s.stall(status.ReasonInvalidSpec, "spec.loader.image is empty and the operator has no default loader image (--loader-image)")
	case s.images.Fetch == "":
		s.stall(status.ReasonInvalidSpec, "spec.fetch.image is empty and the operator has no default fetch image (--fetch-image)")
	case s.bl.Spec.Trigger.Mode == rdfv1.TriggerWatch && r.Resolver == nil:
		s.stall(status.ReasonInvalidSpec, "trigger.mode is watch but this operator has no source watcher configured")
	default:
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("invalid spec: nothing is built", "message", s.outcome.message)
	s.stop = true
	return nil
}
