package engine

import (
	"go/build"
	"strings"
	"testing"
)

// TestImportsOnlyLinalg: the engine's code imports nothing of the project
// but internal/linalg, itself and all the way down: model files, data sets
// and transport are other packages' (internal/modelfile reads and writes
// models).
func TestImportsOnlyLinalg(t *testing.T) {
	seen := map[string]bool{}
	var walk func(path, dir string)
	walk = func(path, dir string) {
		pkg, err := build.Import(path, dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range pkg.Imports {
			if !strings.HasPrefix(imp, "dgpviz/") || seen[imp] {
				continue
			}
			seen[imp] = true
			if imp != "dgpviz/internal/linalg" {
				t.Errorf("%s imports %s", path, imp)
			}
			walk(imp, pkg.Dir)
		}
	}
	walk("dgpviz/internal/engine", ".")
}
