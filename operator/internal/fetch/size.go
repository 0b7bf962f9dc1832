package fetch

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSize reads sizes like 64Mi, 64MiB, 64M, 1G, 1048576. Binary and decimal suffixes both
// mean powers of 1024 only when written with "i" (Ki, Mi, Gi, Ti); K, M, G, T are powers of 1000.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "b")
	mult := int64(1)
	suffixes := []struct {
		s string
		m int64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40},
		{"ki", 1 << 10}, {"mi", 1 << 20}, {"gi", 1 << 30}, {"ti", 1 << 40},
		{"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"t", 1e12}}
	for _, suf := range suffixes {
		if strings.HasSuffix(t, suf.s) {
			t, mult = strings.TrimSuffix(t, suf.s), suf.m
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("invalid size %q (examples: 64Mi, 1Gi, 8388608)", s)
	}
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("size %q too large", s)
	}
	return n * mult, nil
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
