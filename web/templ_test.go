package web

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedTemplIsCurrent checks that every *_templ.go file is what
// `go tool templ generate` makes from its .templ source, so that the
// committed generated code never lags behind the templates.
func TestGeneratedTemplIsCurrent(t *testing.T) {
	srcs, err := filepath.Glob("*.templ")
	if err != nil || len(srcs) == 0 {
		t.Fatalf("no .templ files: %v", err)
	}
	for _, src := range srcs {
		cmd := exec.Command("go", "tool", "templ", "generate", "-f", src, "-stdout")
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("templ generate %s: %v\n%s", src, err, stderr.String())
		}
		gen := strings.TrimSuffix(src, ".templ") + "_templ.go"
		have, err := os.ReadFile(gen)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(have, out.Bytes()) {
			t.Errorf("%s is stale: run `go tool templ generate` and commit the result", gen)
		}
	}
}
