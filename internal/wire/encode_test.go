package wire

import (
	"slices"
	"testing"
)

// testHeader is a message header with one array.
type testHeader struct {
	V        int       `json:"v"`
	Type     string    `json:"type"`
	Z        Ref       `json:"z"`
	Sections []Section `json:"sections"`
}

func (h *testHeader) SetSections(s []Section) { h.Sections = s }

// TestQuantisationError checks the q16 encoding's error bound.
func TestQuantisationError(t *testing.T) {
	v := make([]float64, 1000)
	for i := range v {
		v[i] = float64(i*i)/1000 - 3
	}
	var e Encoder
	b, err := e.Finish(&testHeader{Z: e.Arr(v)})
	if err != nil {
		t.Fatal(err)
	}
	d, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := d["z"].([]float64)
	lo, hi := slices.Min(v), slices.Max(v)
	for i := range v {
		if diff := got[i] - v[i]; diff > (hi-lo)/65534 || -diff > (hi-lo)/65534 {
			t.Fatalf("value %d: %v decoded as %v", i, v[i], got[i])
		}
	}
	if typ := d["sections"].([]any)[0].(map[string]any)["t"]; typ != "q16" {
		t.Fatalf("section type %v, want q16", typ)
	}
}

// FuzzDecode: the binary frame decoder (used by tests and tools on what
// the server sends) never panics on any message.
func FuzzDecode(f *testing.F) {
	var e Encoder
	h := &testHeader{V: Version, Type: "frame", Z: e.Arr([]float64{1, 2, 3})}
	if b, err := e.Finish(h); err == nil {
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{255, 255, 255, 255, '{', '}'})
	f.Fuzz(func(t *testing.T, b []byte) {
		Decode(b)
	})
}
