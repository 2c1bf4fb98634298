package wire

import "unicode/utf8"

// Cut cuts s to at most n bytes at a character's boundary: a close
// frame's reason must be valid UTF-8 and at most 123 bytes.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Truncate cuts s as Cut does and marks the cut with "…": a client's
// text quoted in an error.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Cut(s, n) + "…"
}
