package source

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"

	"github.com/minio/minio-go/v7"
)

// Class sorts errors from the S3 endpoint by what a caller should do about them.
type Class int

const (
	// Transient errors (network, 5xx, throttling) may go away when retried.
	Transient Class = iota
	// Auth errors (wrong or expired credentials, access denied) need a fixed Secret.
	Auth
	// Config errors (no such bucket, TLS trust, bad request) need a fixed spec.
	Config
	// Missing means an object that should exist does not (or changed under us).
	Missing
	// Canceled means the caller's context ended.
	Canceled
)

func (c Class) String() string {
	switch c {
	case Transient:
		return "transient"
	case Auth:
		return "auth"
	case Config:
		return "config"
	case Missing:
		return "missing"
	case Canceled:
		return "canceled"
	}
	return "unknown"
}

// Classify an error returned by minio-go or the network.
func Classify(err error) Class {
	if err == nil {
		return Transient
	}
	if errors.Is(err, context.Canceled) {
		return Canceled
	}
	var resp minio.ErrorResponse
	if errors.As(err, &resp) && (resp.Code != "" || resp.StatusCode != 0) {
		switch resp.Code {
		case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken",
			"ExpiredToken", "AllAccessDisabled", "InvalidSecurity", "AuthorizationHeaderMalformed":
			return Auth
		case "NoSuchBucket", "InvalidBucketName", "PermanentRedirect":
			return Config
		case "NoSuchKey", "NoSuchVersion", "PreconditionFailed", "InvalidRange":
			return Missing
		case "SlowDown", "RequestTimeout", "ServiceUnavailable", "InternalError", "RequestTimeTooSkewed",
			"XMinioServerNotInitialized", "XMinioStorageFull", "OperationAborted":
			return Transient
		}
		switch {
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			return Auth
		case resp.StatusCode == http.StatusNotFound:
			return Missing
		case resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
			return Transient
		case resp.StatusCode >= 400:
			return Config
		}
	}
	var uaErr x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var certErr *tls.CertificateVerificationError
	var invalidErr x509.CertificateInvalidError
	if errors.As(err, &uaErr) || errors.As(err, &hostErr) || errors.As(err, &certErr) || errors.As(err, &invalidErr) {
		return Config
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return Config
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ETIMEDOUT) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
		return Transient
	}
	// Anything else from the network stack is worth retrying; an error that did not come from
	// the network (e.g. minio-go's own argument checks) will not go away by retrying.
	var urlErr *url.Error
	var netErr net.Error
	var opErr *net.OpError
	if errors.As(err, &urlErr) || errors.As(err, &netErr) || errors.As(err, &opErr) {
		return Transient
	}
	return Config
}

// Describe turns an S3/network error into a message for humans, with a hint about the
// likely fix. It never includes credentials (minio-go errors do not carry them).
func Describe(err error) string {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) && resp.Code != "" {
		msg := fmt.Sprintf("%s (%s", resp.Error(), resp.Code)
		if resp.StatusCode != 0 {
			msg += fmt.Sprintf(", HTTP %d", resp.StatusCode)
		}
		msg += ")"
		switch Classify(err) {
		case Auth:
			msg += "; check the access key and secret (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY from the credentials Secret) and the bucket policy"
		case Config:
			if resp.Code == "NoSuchBucket" {
				msg += "; check the bucket name and endpoint"
			}
		}
		return msg
	}
	if Classify(err) == Config {
		return err.Error() + "; check the endpoint's TLS certificate and the CA file"
	}
	return err.Error()
}
