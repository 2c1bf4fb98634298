package dataset

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// equalDense reports whether a and b have the same shape and elements.
func equalDense(a, b *mat.Dense) bool {
	if a == nil || b == nil {
		return a == b
	}
	return mat.Equal(a, b)
}

// withMaxFileSize sets the file size limit to n for the duration of t.
func withMaxFileSize(t *testing.T, n int64) {
	t.Helper()
	old := maxFileSize
	maxFileSize = n
	t.Cleanup(func() { maxFileSize = old })
}

func TestLimitReader(t *testing.T) {
	withMaxFileSize(t, 10)
	for _, c := range []struct {
		n       int
		wantErr bool
	}{
		{0, false},
		{9, false},
		{10, false}, // exactly the limit is allowed
		{11, true},
		{1000, true},
	} {
		got, err := io.ReadAll(newLimitReader(bytes.NewReader(make([]byte, c.n)), maxFileSize))
		if c.wantErr {
			if !errors.Is(err, errTooLarge) {
				t.Errorf("%d bytes: err = %v, want errTooLarge", c.n, err)
			}
			continue
		}
		if err != nil || len(got) != c.n {
			t.Errorf("%d bytes: read %d, err %v", c.n, len(got), err)
		}
	}
}

func TestFileSizeLimit(t *testing.T) {
	// 100 bytes is far below either input below.
	withMaxFileSize(t, 100)
	var robot strings.Builder
	for i := range 10 { // ten valid 42-byte lines, one scan each
		fmt.Fprintf(&robot, "%d.000000 00:0f:04:02:07:f0 23.40 5.55 -62\n", 1135214648+i)
	}
	if _, err := ReadRobot(strings.NewReader(robot.String())); err == nil || !strings.Contains(err.Error(), "larger than the limit of 100 bytes") {
		t.Errorf("robot: err = %v, want MaxFileSize error", err)
	}
	csv := "x,y\n" + strings.Repeat("1,2\n", 50)
	if _, err := ReadCSV(strings.NewReader(csv), "big.csv", CSVOptions{}); err == nil || !strings.Contains(err.Error(), "larger than the limit of 100 bytes") {
		t.Errorf("csv: err = %v, want MaxFileSize error", err)
	}
}

func TestParseNumber(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		msg  string // substring of the problem, "" for success
	}{
		{"1.5", 1.5, ""},
		{"-92", -92, ""},
		{"1e-3", 1e-3, ""},
		{"", 0, "empty"},
		{"abc", 0, "not a number"},
		{"1,5", 0, "not a number"},
		{"NaN", 0, "not a finite"},
		{"-Inf", 0, "not a finite"},
		{"1e308", 0, "too large"},
		{"-1e151", 0, "too large"},
		{"1e400", 0, "out of range"}, // beyond float64's 1.8e308
	} {
		got, msg := parseNumber(c.in)
		if c.msg == "" {
			if msg != "" || got != c.want {
				t.Errorf("parseNumber(%q) = %v, %q; want %v", c.in, got, msg, c.want)
			}
			continue
		}
		if !strings.Contains(msg, c.msg) {
			t.Errorf("parseNumber(%q) problem = %q, want it to contain %q", c.in, msg, c.msg)
		}
	}
}
