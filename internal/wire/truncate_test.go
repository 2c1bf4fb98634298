package wire

import (
	"testing"
	"unicode/utf8"
)

// TestTruncate: a cut never splits a character, and only a cut string is
// marked.
func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"αβγ", 3, "α…"}, // byte 3 is inside β: back to its start
		{"αβγ", 1, "…"},
	} {
		if got := Truncate(tc.s, tc.n); got != tc.want || !utf8.ValidString(got) {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
	if got := Cut("αβγ", 5); got != "αβ" {
		t.Errorf("Cut(αβγ, 5) = %q, want αβ", got)
	}
}
