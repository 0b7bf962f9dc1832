package fetch

import (
	"strings"
	"testing"
)

func TestParseSizeKubernetesQuantities(t *testing.T) {
	for in, want := range map[string]int64{
		"1048576": 1048576,
		"0":       0,
		"64M":     64_000_000,
		"64MB":    64_000_000,
		"64Mi":    64 << 20,
		"64MiB":   64 << 20,
		"1k":      1000,
		"1kB":     1000,
		"1Ki":     1024,
		"1KiB":    1024,
		"1.5Gi":   3 << 29,
		"2.5G":    2_500_000_000,
		"1T":      1_000_000_000_000,
		"1TB":     1_000_000_000_000,
		"1Ti":     1 << 40,
		"1TiB":    1 << 40,
		"1P":      1_000_000_000_000_000,
		"1Pi":     1 << 50,
		"2E":      2_000_000_000_000_000_000,
		"1Ei":     1 << 60,
	} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	// Not sizes: milli, exponents, lower-case or unknown units, signs, spaces, fractions of a byte, overflow.
	for _, in := range []string{"", "64m", "64K", "64mi", "64kb", "64Mb", "1e6", "1E3", "-1", "+1", " 64Mi", "64 Mi",
		"64PB", "64EiB", "0.5", "1.0001k", "8Ei", "10E", "Mi", "1.5.0Gi", "0x10"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		} else if !strings.Contains(err.Error(), "invalid size") {
			t.Errorf("ParseSize(%q): %v", in, err)
		}
	}
}
