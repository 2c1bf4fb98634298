package dataset

import (
	"bytes"
	"os"
	"path/filepath"
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
		{"testdata/good.csv", "csv:good.csv", ""}, // by the extension
		{"testdata/good.txt", "", "unknown data set"},
		{"robot:", "", `missing path after "robot:"`},
		{"csv:", "", `missing path after "csv:"`},
		{"robot:testdata/nope.txt", "", "no such file"},
		{"csv:" + fixtureFile, "", "no output column"}, // one space-separated field per line
		{"faces", "", `unknown data set "faces": valid are "step", "robot", "robot:PATH", "frey", "frey:PATH", "csv:PATH", "npy:PATH", "npz:PATH" and "parquet:PATH"`},
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

// TestLoadWithMaxRows: a file past LoadOptions.MaxRows is refused with a
// message that names the flag that raises the limit; without the option a
// file past MaxRows, ReadCSV's default, is read.
func TestLoadWithMaxRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long.csv")
	if err := os.WriteFile(path, []byte("x,y\n"+strings.Repeat("1,2\n", MaxRows+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadWith("csv:"+path, LoadOptions{MaxRows: 3})
	if want := "line 5: more data rows than the limit of 3 rows (-max-rows raises it)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
	ds, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := ds.Rows(); n != MaxRows+1 {
		t.Errorf("read %d rows, want %d", n, MaxRows+1)
	}
}

// TestLoadSource: Load records the public file a data set was read from
// only when the file's checksum is that file's, wherever it lies; other
// data have none.
func TestLoadSource(t *testing.T) {
	if ds, err := Load("frey:testdata/frey_small.mat"); err != nil || ds.Source != nil {
		t.Errorf("the generated fixture: source %v (%v), want none", ds.Source, err)
	}
	if ds := Step(); ds.Source != nil {
		t.Errorf("the step data: source %v, want none", ds.Source)
	}
	real := sharedFile(t, "robot_wireless", "uw-floor.txt")
	b, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	copyOf := filepath.Join(dir, "copy.txt")
	os.WriteFile(copyOf, b, 0o644)
	ds, err := Load("robot:" + copyOf)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Source == nil || ds.Source.Name != "robot" {
		t.Errorf("a copy of the robot file elsewhere: source %v, want robot", ds.Source)
	}
	// The same data with one reading changed by a digit is another file.
	edited := bytes.Replace(b, []byte("-56"), []byte("-57"), 1)
	if bytes.Equal(edited, b) {
		t.Fatal("no reading -56 in the robot file to change")
	}
	os.WriteFile(copyOf, edited, 0o644)
	if ds, err := Load("robot:" + copyOf); err != nil || ds.Source != nil {
		t.Errorf("an edited robot file: source %v (%v), want none", ds.Source, err)
	}
}

func TestIsFileSpec(t *testing.T) {
	for spec, want := range map[string]bool{"csv:a.csv": true, "npz:x": true, " walk.parquet": true, "w.NPY": true, "step": false, "robot": false,
		"robot:uw-floor.txt": false, "frey:faces.csv": false, "a.txt": false, "C:\\data\\w.csv": true} {
		if got := IsFileSpec(spec); got != want {
			t.Errorf("IsFileSpec(%q) = %v, want %v", spec, got, want)
		}
	}
}

// TestAbsSpec: a spec's path is made absolute, whatever its form; specs
// that name no file stay as they are; LoadWith records the absolute path.
func TestAbsSpec(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ spec, want string }{
		{"step", "step"},
		{" robot ", "robot"},
		{"csv:data.csv", "csv:" + filepath.Join(wd, "data.csv")},
		{"robot:../floor.txt", "robot:" + filepath.Join(filepath.Dir(wd), "floor.txt")},
		{"walk.parquet", filepath.Join(wd, "walk.parquet")},
		{"/abs/x.npy", "/abs/x.npy"},
		{"npz:/abs/x.npz", "npz:/abs/x.npz"},
		{"csv:", "csv:"},
	} {
		if got, err := AbsSpec(tc.spec); err != nil || got != tc.want {
			t.Errorf("AbsSpec(%q) = %q, %v; want %q", tc.spec, got, err, tc.want)
		}
	}
	ds, err := Load("csv:testdata/" + firstCSV(t))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(wd, "testdata", firstCSV(t)); ds.Path != want {
		t.Errorf("Path %q, want %q", ds.Path, want)
	}
	if Step().Path != "" {
		t.Error("the step function has a path")
	}
}

// firstCSV names a CSV file in testdata.
func firstCSV(t *testing.T) string {
	t.Helper()
	m, err := filepath.Glob("testdata/*.csv")
	if err != nil || len(m) == 0 {
		t.Fatal("no CSV in testdata")
	}
	return filepath.Base(m[0])
}
