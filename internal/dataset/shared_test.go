package dataset

import (
	"os"
	"path/filepath"
	"testing"
)

// sharedDataDir returns the directory of the project's public data sets,
// shared/data beside the repository root (for /work/main that is
// /work/shared/data). It walks up from the package directory and checks
// shared/data at every level, so it also works from nested checkouts. When
// no such directory exists the test is skipped: the data are not committed
// with the project.
func sharedDataDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Skipf("shared data not found: cannot get working directory (%v): skipping", err)
	}
	want := "" // where the data are expected: beside the module root
	for dir := wd; ; {
		cand := filepath.Join(dir, "shared", "data")
		if fi, err := os.Stat(cand); err == nil && fi.IsDir() {
			return cand
		}
		if want == "" {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				want = filepath.Join(filepath.Dir(dir), "shared", "data")
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if want == "" {
		want = filepath.Join(wd, "..", "..", "..", "shared", "data")
	}
	t.Skipf("shared data not found at %s: skipping", want)
	return ""
}

// sharedFile returns the path of a file under sharedDataDir, skipping the
// test when the file is absent.
func sharedFile(t *testing.T, elem ...string) string {
	t.Helper()
	path := filepath.Join(append([]string{sharedDataDir(t)}, elem...)...)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("shared data not found at %s: skipping", path)
	}
	return path
}
