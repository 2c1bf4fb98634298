package web

import "testing"

// TestThousands: row counts with a comma between groups of three digits,
// checked against numbers written out by hand.
func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 2000: "2,000", 12345: "12,345", 999999: "999,999", 10000000: "10,000,000", -1234567: "-1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
