// Package plotkittest reads back what a figure printed: the text of a PDF,
// through poppler's pdftotext, for the tests of every package that draws
// figures.
package plotkittest

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// PDFText returns the text of pdf as pdftotext lays it out. It skips the
// test when pdftotext is missing — or fails it when CI is set, where it
// must be installed (apt-get install poppler-utils).
func PDFText(t testing.TB, pdf []byte) string {
	t.Helper()
	exe, err := exec.LookPath("pdftotext")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no pdftotext found and CI is set: install it (apt-get install poppler-utils)")
		}
		t.Skip("no pdftotext found (apt-get install poppler-utils); PDF text not checked")
	}
	cmd := exec.Command(exe, "-enc", "UTF-8", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext: %v: %s", err, stderr.Bytes())
	}
	return string(out)
}
