package dataset

import (
	"bytes"
	"strings"
	"testing"
)

// TestWrongFormat: a MAT-file given as robot data, and text given as a
// MAT-file, are named for what they are, with the rule of what was wanted.
func TestWrongFormat(t *testing.T) {
	if _, err := LoadRobot("testdata/frey_small.mat"); err == nil || !strings.Contains(err.Error(), "this is a MATLAB MAT-file, not a robot file (plain text, one reading per line: time, access point, x, y, signal strength in dBm") {
		t.Errorf("a MAT-file as robot data: %v", err)
	}
	if _, err := LoadFrey(fixtureFile); err == nil || !strings.Contains(err.Error(), "this is text, not a MATLAB MAT-file") || !strings.Contains(err.Error(), "robot:PATH") {
		t.Errorf("robot data as a MAT-file: %v", err)
	}
	long := bytes.Repeat([]byte{0xff, 0x01}, 40000)
	if _, err := ReadRobot(bytes.NewReader(long)); err == nil || !strings.Contains(err.Error(), "longer than 65536 bytes: not a robot file (plain text") {
		t.Errorf("a long binary line as robot data: %v", err)
	}
}
