package admit

import (
	"net/url"
	"testing"
)

// FuzzParseQuery: any URL query gives a configuration or an error, never a
// panic; an accepted one validates against the default limits or is
// refused by Validate with an error.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"", "data=step&hidden=1,1&m=12&opt=lbfgs&lr=0.01&seed=1&frozen=kernel,noise&play=1&speed=60", "hidden=,,,", "m=-1", "lr=NaN", "seed=18446744073709551616", "frozen=%00", "speed=1e9", "hidden=1,1,1,1,1,1,1,1,1,1,1"} {
		f.Add(s)
	}
	l := DefaultLimits()
	f.Fuzz(func(t *testing.T, s string) {
		q, err := url.ParseQuery(s)
		if err != nil {
			return
		}
		c, err := ParseQuery(q, DefaultConfig())
		if err != nil {
			return
		}
		_ = c.Validate(l, nil) // must not panic
		if q2, err := ParseQuery(c.Query(), DefaultConfig()); err == nil && q2.Query().Encode() != c.Query().Encode() {
			t.Fatalf("a configuration does not survive its own URL: %q → %q", c.Query().Encode(), q2.Query().Encode())
		}
	})
}
