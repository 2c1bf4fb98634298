package dataset

import (
	"fmt"
	"strings"
)

// Load returns the data set described by spec:
//
//	"step" or ""   the built-in step function (see Step)
//	"robot"        the robot WiFi data uw-floor.txt, found by Find
//	"robot:PATH"   robot WiFi data read from PATH (see LoadRobot)
//	"frey"         the Frey faces frey_rawface.mat, found by Find
//	"frey:PATH"    the Frey faces MAT-file read from PATH (see LoadFrey)
//	"csv:PATH"     a CSV file read from PATH with default CSVOptions (see LoadCSV)
//
// Surrounding white space in spec is ignored; PATH is used as given.
func Load(spec string) (*Dataset, error) { return LoadWith(spec, CSVOptions{}) }

// LoadWith is Load, reading a CSV file with opt (a command line's limits,
// CSVOptions.RaiseLimits).
func LoadWith(spec string, opt CSVOptions) (*Dataset, error) {
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
	if ok {
		switch scheme {
		case "robot", "csv", "frey":
			if path == "" {
				return nil, fmt.Errorf("%q: missing path after %q", spec, scheme+":")
			}
			switch scheme {
			case "robot":
				return LoadRobot(path)
			case "frey":
				return LoadFrey(path)
			}
			return LoadCSV(path, opt)
		}
	}
	return nil, fmt.Errorf(`unknown data set %q: valid are "step", "robot", "robot:PATH", "frey", "frey:PATH" and "csv:PATH"`, spec)
}
