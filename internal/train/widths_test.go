package train

import (
	"dgpviz/internal/engine"
	"slices"
	"strings"
	"testing"
)

func TestParseHidden(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  string
	}{
		{"", []int{}, ""},
		{"  ", []int{}, ""},
		{"1,1", []int{1, 1}, ""},
		{" 3 , 3 ", []int{3, 3}, ""},
		{"2", []int{2}, ""},
		{"1,,1", nil, "is not a positive integer"},
		{"0", nil, "is not a positive integer"},
		{"-1", nil, "is not a positive integer"},
		{"x", nil, "is not a positive integer"},
		{strings.Repeat("1,", engine.MaxLayers-1) + "1", nil, "more than 15 hidden layers"}, // engine.MaxLayers 16
	} {
		got, err := ParseHidden(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseHidden(%q): %v, want an error containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseHidden(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// FuzzParseHidden: any text gives widths that are positive and few enough,
// or an error; never a panic.
func FuzzParseHidden(f *testing.F) {
	for _, s := range []string{"", "1,1", "8,8,8,8,8", "1,", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHidden(s)
		if err != nil {
			return
		}
		if len(h) > engine.MaxLayers-1 {
			t.Fatalf("%d hidden layers", len(h))
		}
		for _, w := range h {
			if w < 1 {
				t.Fatalf("width %d", w)
			}
		}
	})
}
