package web

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

func itoa(n int) string                  { return strconv.Itoa(n) }
func uitoa(n uint64) string              { return strconv.FormatUint(n, 10) }
func ftoa(f float64) string              { return strconv.FormatFloat(f, 'g', -1, 64) }
func contains(s []string, v string) bool { return slices.Contains(s, v) }

// thousands writes n with a comma between groups of three digits
// (10,000,000), as the page and the docs write row counts.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func widths(h []int) string {
	s := make([]string, len(h))
	for i, w := range h {
		s[i] = strconv.Itoa(w)
	}
	return strings.Join(s, ",")
}

var groupLabels = map[string]string{
	"kernel":   "kernel",
	"noise":    "noise",
	"inducing": "inducing Z",
	"q_mu":     "q(u) mean",
	"q_sqrt":   "q(u) cov",
}

func groupLabel(g string) string {
	if l, ok := groupLabels[g]; ok {
		return l
	}
	return g
}

// speeds lists the speed choices, including cur.
func speeds(cur int) []int {
	s := []int{5, 20, 60, 200, 0}
	if !slices.Contains(s, cur) {
		s = append([]int{cur}, s...)
	}
	return s
}

func speedLabel(sp int) string {
	if sp == 0 {
		return "max it/s"
	}
	return strconv.Itoa(sp) + " it/s"
}

// capitalize upper-cases the first letter of s ("across a bend" → "Across
// a bend").
func capitalize(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
