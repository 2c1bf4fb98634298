package dataset

import (
	"fmt"
	"path/filepath"
	"strings"
)

// LoadOptions bound what LoadWith reads from a file that a person named:
// by default memory is the only limit.
type LoadOptions struct {
	// MaxRows, when positive, refuses a data file (CSV, NumPy, Parquet)
	// with more data rows than this, as it is read; its message names
	// RowsFlag.
	MaxRows int
}

// Load returns the data set described by spec, without limits beyond
// the fixed files' own (see LoadWith).
func Load(spec string) (*Dataset, error) { return LoadWith(spec, LoadOptions{}) }

// LoadWith returns the data set described by spec:
//
//	"step" or ""   the built-in step function (see Step)
//	"robot"        the robot WiFi data uw-floor.txt, found by Find
//	"robot:PATH"   robot WiFi data read from PATH (see LoadRobot)
//	"frey"         the Frey faces frey_rawface.mat, found by Find
//	"frey:PATH"    the Frey faces MAT-file read from PATH (see LoadFrey)
//	"csv:PATH"     a CSV file read from PATH (see LoadCSV)
//	"npy:PATH"     a NumPy .npy file (see LoadNPY)
//	"npz:PATH"     a NumPy .npz file (see LoadNPZ)
//	"parquet:PATH" an Apache Parquet file (see LoadParquet)
//	PATH.csv       likewise, by the file's extension: .csv, .npy, .npz, .parquet
//
// Surrounding white space in spec is ignored; PATH is used as given.
func LoadWith(spec string, o LoadOptions) (*Dataset, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" || spec == "step" {
		return Step(), nil
	}
	if r, ok := RemoteNamed(spec); ok {
		path, err := Find(r)
		if err != nil {
			return nil, err
		}
		spec += ":" + path
	}
	scheme, path, ok := strings.Cut(spec, ":")
	if !ok || !knownScheme(scheme) {
		// A path alone, its format told by its extension.
		if s := strings.TrimPrefix(strings.ToLower(filepath.Ext(spec)), "."); fileSchemes[s] {
			scheme, path, ok = s, spec, true
		}
	}
	if ok && knownScheme(scheme) {
		if path == "" {
			return nil, fmt.Errorf("%q: missing path after %q", spec, scheme+":")
		}
		ds, err := loadScheme(scheme, path, o)
		if err != nil {
			return nil, err
		}
		if ds.Path, err = filepath.Abs(path); err != nil {
			return nil, err
		}
		return ds, nil
	}
	return nil, fmt.Errorf(`unknown data set %q: valid are "step", "robot", "robot:PATH", "frey", "frey:PATH", "csv:PATH", "npy:PATH", "npz:PATH" and "parquet:PATH" (or a PATH ending in .csv, .npy, .npz or .parquet)`, spec)
}

// loadScheme reads the file at path as scheme says.
func loadScheme(scheme, path string, o LoadOptions) (*Dataset, error) {
	maxRows := -1
	if o.MaxRows > 0 {
		maxRows = o.MaxRows
	}
	switch scheme {
	case "robot":
		return LoadRobot(path)
	case "frey":
		return LoadFrey(path)
	}
	opt := CSVOptions{MaxRows: maxRows, MaxBytes: -1}
	switch scheme {
	case "npy":
		return LoadNPY(path, opt)
	case "npz":
		return LoadNPZ(path, opt)
	case "parquet":
		return LoadParquet(path, opt)
	}
	return LoadCSV(path, opt)
}

// SpecFile splits spec into its scheme and the path of the file it
// names ("csv:data.csv": "csv", "data.csv"; "data.npy": "", "data.npy");
// path is "" for a spec that names no file ("step", "robot").
func SpecFile(spec string) (scheme, path string) {
	spec = strings.TrimSpace(spec)
	if scheme, path, ok := strings.Cut(spec, ":"); ok && knownScheme(scheme) {
		return scheme, path
	}
	if IsFileSpec(spec) {
		return "", spec
	}
	return "", ""
}

// AbsSpec returns spec with the path it names, if any, made absolute
// ("csv:data.csv" → "csv:/home/me/data.csv"), so that the spec names the
// same file from any folder; other specs ("step", "robot") as they are.
func AbsSpec(spec string) (string, error) {
	scheme, path := SpecFile(spec)
	if path == "" {
		return strings.TrimSpace(spec), nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if scheme == "" {
		return abs, nil
	}
	return scheme + ":" + abs, nil
}

// fileSchemes are the schemes of data files, which a path's extension
// may choose.
var fileSchemes = map[string]bool{"csv": true, "npy": true, "npz": true, "parquet": true}

func knownScheme(s string) bool { return s == "robot" || s == "frey" || fileSchemes[s] }

// IsFileSpec reports whether spec names a data file of one's own (CSV,
// NumPy, Parquet: by its scheme or its extension), whose columns follow
// CSVConventions, rather than a built-in or public data set.
func IsFileSpec(spec string) bool {
	spec = strings.TrimSpace(spec)
	if scheme, _, ok := strings.Cut(spec, ":"); ok && knownScheme(scheme) {
		return fileSchemes[scheme]
	}
	return fileSchemes[strings.TrimPrefix(strings.ToLower(filepath.Ext(spec)), ".")]
}
