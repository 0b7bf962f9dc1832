package source

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
	"testing"

	"github.com/minio/minio-go/v7"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err  error
		want Class
	}{
		{minio.ErrorResponse{Code: "AccessDenied", StatusCode: 403}, Auth},
		{minio.ErrorResponse{Code: "SignatureDoesNotMatch", StatusCode: 403}, Auth},
		{fmt.Errorf("listing: %w", minio.ErrorResponse{Code: "InvalidAccessKeyId", StatusCode: 403}), Auth},
		{minio.ErrorResponse{Code: "NoSuchBucket", StatusCode: 404}, Config},
		{minio.ErrorResponse{Code: "NoSuchKey", StatusCode: 404}, Missing},
		{minio.ErrorResponse{Code: "PreconditionFailed", StatusCode: 412}, Missing},
		{minio.ErrorResponse{Code: "SlowDown", StatusCode: 503}, Transient},
		{minio.ErrorResponse{Code: "Whatever", StatusCode: 500}, Transient},
		{minio.ErrorResponse{Code: "InvalidArgument", StatusCode: 400}, Config},
		{&url.Error{Op: "Get", URL: "http://x", Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}, Transient},
		{fmt.Errorf("part: %w", io.ErrUnexpectedEOF), Transient},
		{errors.New("Bucket name cannot be shorter than 3 characters"), Config},
	} {
		if got := Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
