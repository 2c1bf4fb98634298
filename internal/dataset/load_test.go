package dataset

import (
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	for _, c := range []struct {
		spec     string
		wantName string
		wantErr  string
	}{
		{"step", "step", ""},
		{"", "step", ""},
		{"  step\n", "step", ""},
		{"robot:" + fixtureFile, "robot", ""},
		{"csv:testdata/good.csv", "csv:good.csv", ""},
		{"robot:", "", `missing path after "robot:"`},
		{"csv:", "", `missing path after "csv:"`},
		{"robot:testdata/nope.txt", "", "no such file"},
		{"csv:" + fixtureFile, "", "no output column"}, // one space-separated field per line
		{"faces", "", `unknown data set "faces": valid are "step", "robot", "robot:PATH", "frey", "frey:PATH" and "csv:PATH"`},
		{"json:a.json", "", `unknown data set "json:a.json"`},
		{"Step", "", "unknown data set"},
	} {
		ds, err := Load(c.spec)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || strings.HasPrefix(err.Error(), "dataset: ") {
				t.Errorf("Load(%q): err = %v, want %q", c.spec, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Load(%q): %v", c.spec, err)
			continue
		}
		if ds.Name != c.wantName {
			t.Errorf("Load(%q).Name = %q, want %q", c.spec, ds.Name, c.wantName)
		}
	}
}
