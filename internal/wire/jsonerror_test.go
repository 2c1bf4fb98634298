package wire

import (
	"encoding/json"
	"regexp"
	"testing"
)

// TestJSONError: decoding errors read in the protocol's words, without Go's
// type names or its parser's vocabulary.
func TestJSONError(t *testing.T) {
	var v struct {
		M    int       `json:"m"`
		Seed uint64    `json:"seed"`
		Z    []float64 `json:"z"`
		Op   string    `json:"op"`
		On   bool      `json:"on"`
		X    float64   `json:"x"`
	}
	goWords := regexp.MustCompile(`\b(u?int\d*|float\d+|string|bool)\b|invalid character|looking for|unmarshal|json:|\[\]`)
	for _, c := range []struct{ in, want string }{
		{`{"m": 2.5}`, `field "m": number 2.5 is not a whole number`},
		{`{"seed": -1}`, `field "seed": number -1 is not a whole number ≥ 0`},
		{`{"z": 3}`, `field "z": number is not a list`},
		{`{"op": 3}`, `field "op": number is not text`},
		{`{"on": "yes"}`, `field "on": string is not true or false`},
		{`{"x": "1"}`, `field "x": string is not a number`},
		{`x`, `not valid JSON at byte 1`},
		{`{"m": `, `the JSON text ends early`},
	} {
		err := json.Unmarshal([]byte(c.in), &v)
		if err == nil {
			t.Fatalf("%s decoded", c.in)
		}
		got := JSONError(err)
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.in, got, c.want)
		}
		if w := goWords.FindString(regexp.MustCompile(`"[^"]*"|string is|number`).ReplaceAllString(got, "")); w != "" {
			t.Errorf("%s: %q has Go's word %q", c.in, got, w)
		}
	}
}
