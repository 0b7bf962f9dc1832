package fetch

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// sizeGrammar is the size grammar both binaries share (the loader's --memory reads the same):
// a Kubernetes quantity restricted to bytes — a plain number, a decimal suffix k, M, G, T, P, E
// or a binary one Ki..Ei, fractions allowed — plus the aliases kB..TB and KiB..TiB that people
// write. Kubernetes' milli suffix and exponents are not sizes and are refused.
var sizeGrammar = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)(k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|kB|MB|GB|TB|KiB|MiB|GiB|TiB)?$`)

// ParseSize reads a byte size with Kubernetes' meaning: 64Mi = 64·2^20, 64M = 64·10^6,
// 1.5Gi, 1048576; also 64MiB and 64MB.
func ParseSize(s string) (int64, error) {
	m := sizeGrammar.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("invalid size %q: want bytes as a Kubernetes quantity (e.g. 64Mi, 1.5Gi, 500M, 8388608)", s)
	}
	// resource.Quantity does the arithmetic once the alias is the Kubernetes suffix.
	q, err := resource.ParseQuantity(m[1] + strings.TrimSuffix(m[2], "B"))
	if err != nil {
		return 0, fmt.Errorf("invalid size %q: %w", s, err)
	}
	// Value rounds up, and parsing clamps what exceeds int64 to its maximum: equality says
	// the value is exact, and the maximum itself counts as too large.
	n := q.Value()
	if n == math.MaxInt64 || resource.NewQuantity(n, resource.BinarySI).Cmp(q) != 0 {
		return 0, fmt.Errorf("invalid size %q: not a whole number of bytes, or too large", s)
	}
	return n, nil
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
