package dataset

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "regenerate testdata/robot_small.txt with writeRobotFixture")

// Fixture parameters: 60 scans (about 90 s of driving, one lap of the loop)
// from seed 1; changing either changes testdata/robot_small.txt.
const (
	fixtureFile  = "testdata/robot_small.txt"
	fixtureScans = 60
	fixtureSeed  = 1
)

// TestRobotFixtureUpToDate checks that the committed fixture is what
// writeRobotFixture produces; run with -update to regenerate it.
func TestRobotFixtureUpToDate(t *testing.T) {
	var buf bytes.Buffer
	if _, err := writeRobotFixture(&buf, fixtureScans, fixtureSeed); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(fixtureFile, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", fixtureFile, buf.Len())
	}
	got, err := os.ReadFile(fixtureFile)
	if err != nil {
		t.Fatalf("%v (run go test -run TestRobotFixtureUpToDate -update to create it)", err)
	}
	if !bytes.Equal(got, buf.Bytes()) {
		t.Errorf("%s differs from writeRobotFixture output; run go test -run TestRobotFixtureUpToDate -update", fixtureFile)
	}
}

func TestRobotFixtureShape(t *testing.T) {
	var buf bytes.Buffer
	truth, err := writeRobotFixture(&buf, fixtureScans, fixtureSeed)
	if err != nil {
		t.Fatal(err)
	}
	// Like uw-floor.txt: all 30 access points appear, each scan keeps
	// 11–15 readings within [-90, -34] dBm.
	if len(truth.APs) != fixtureAPs {
		t.Errorf("%d access points appear, want %d", len(truth.APs), fixtureAPs)
	}
	for i, m := range truth.Readings {
		if len(m) < fixtureMinPerScn || len(m) > fixtureMaxPerScn {
			t.Errorf("scan %d has %d readings, want 11–15", i, len(m))
		}
		for ap, v := range m {
			if v < fixtureFloorDBm || v > fixtureCeilDBm {
				t.Errorf("scan %d, %s: %d dBm outside [-90, -34]", i, ap, v)
			}
		}
	}
	// The route starts at the tail's end (20, 25) and reaches the loop
	// (y = 17 or below) after the 8 m tail, about 6 scans at 1.5 m each.
	if truth.Positions[0] != [2]float64{20, 25} {
		t.Errorf("first position %v, want [20 25]", truth.Positions[0])
	}
	for i := 6; i < len(truth.Positions); i++ {
		if p := truth.Positions[i]; p[1] > 17 {
			t.Errorf("scan %d at %v: above the loop after the tail", i, p)
		}
	}
}

func TestReadRobotFixture(t *testing.T) {
	var buf bytes.Buffer
	truth, err := writeRobotFixture(&buf, fixtureScans, fixtureSeed)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := LoadRobot(fixtureFile)
	if err != nil {
		t.Fatal(err)
	}
	checkRobotAgainstTruth(t, ds, truth)

	// Reading the same text from a stream gives the same data set.
	ds2, err := ReadRobot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !equalDense(ds.X, ds2.X) || !equalDense(ds.Y, ds2.Y) || !equalDense(ds.YTest, ds2.YTest) || !equalDense(ds.Truth, ds2.Truth) {
		t.Error("ReadRobot and LoadRobot differ")
	}
}

// checkRobotAgainstTruth compares a loaded robot data set with the
// simulation that wrote it.
func checkRobotAgainstTruth(t *testing.T, ds *Dataset, truth robotTruth) {
	t.Helper()
	n := len(truth.Times)
	nTrain := (546*n + 999) / 1000 // ⌈0.546·n⌉, the documented split for n ≠ 394
	if n == fixtureScans && nTrain != 33 {
		t.Fatalf("split of 60 scans = %d, want ⌈32.76⌉ = 33", nTrain)
	}
	if ds.Name != "robot" {
		t.Errorf("Name = %q, want robot", ds.Name)
	}
	if got := strings.Join(ds.OutputNames, " "); got != strings.Join(truth.APs, " ") {
		t.Errorf("OutputNames = %s, want %s", got, strings.Join(truth.APs, " "))
	}
	d := len(truth.APs)
	if r, c := ds.X.Dims(); r != nTrain || c != 1 {
		t.Fatalf("X is %d×%d, want %d×1", r, c, nTrain)
	}
	if r, c := ds.Y.Dims(); r != nTrain || c != d {
		t.Fatalf("Y is %d×%d, want %d×%d", r, c, nTrain, d)
	}
	if r, c := ds.XTest.Dims(); r != n-nTrain || c != 1 {
		t.Fatalf("XTest is %d×%d, want %d×1", r, c, n-nTrain)
	}
	if r, c := ds.YTest.Dims(); r != n-nTrain || c != d {
		t.Fatalf("YTest is %d×%d, want %d×%d", r, c, n-nTrain, d)
	}
	if r, c := ds.Truth.Dims(); r != n || c != 2 {
		t.Fatalf("Positions is %d×%d, want %d×2", r, c, n)
	}
	if len(ds.Imputed) != n {
		t.Fatalf("Imputed has %d rows, want %d", len(ds.Imputed), n)
	}
	if len(ds.InputNames) != 1 || ds.InputNames[0] != "time" || ds.InputUnit != "s" || ds.OutputUnit != "dBm" {
		t.Errorf("InputNames = %q", ds.InputNames)
	}

	fills := 0
	for i := range n {
		x, y := ds.X, ds.Y
		row := i
		if i >= nTrain {
			x, y, row = ds.XTest, ds.YTest, i-nTrain
		}
		// Times are written in whole microseconds and parsed as float64
		// Unix times (ulp 2.4e-7 s near 1.1e9 s), so they agree to 1e-6 s.
		if got := x.At(row, 0); math.Abs(got-truth.Times[i]) > 1e-6 {
			t.Errorf("scan %d: time %v, want %v", i, got, truth.Times[i])
		}
		if p := truth.Positions[i]; ds.Truth.At(i, 0) != p[0] || ds.Truth.At(i, 1) != p[1] {
			t.Errorf("scan %d: position (%v, %v), want %v", i, ds.Truth.At(i, 0), ds.Truth.At(i, 1), p)
		}
		if len(ds.Imputed[i]) != d {
			t.Fatalf("Imputed[%d] has %d entries, want %d", i, len(ds.Imputed[i]), d)
		}
		for j, ap := range truth.APs {
			dBm, read := truth.Readings[i][ap]
			want := RobotMissingDBm
			if read {
				want = float64(dBm)
			} else {
				fills++
			}
			if got := y.At(row, j); got != want {
				t.Errorf("scan %d, %s: %v, want %v", i, ap, got, want)
			}
			if ds.Imputed[i][j] == read {
				t.Errorf("scan %d, %s: Imputed = %v, want %v", i, ap, ds.Imputed[i][j], !read)
			}
		}
	}
	// Every reading not in the file is a fill-in.
	if lines := n*d - fills; lines != truth.Lines {
		t.Errorf("%d readings kept, file has %d lines", lines, truth.Lines)
	}
}

func TestRobotTrainCount(t *testing.T) {
	for _, c := range []struct{ n, want int }{
		{394, 215}, // uw-floor.txt convention, not ⌈0.546·394⌉ = 216
		{1, 1},     // ⌈0.546⌉
		{2, 2},     // ⌈1.092⌉
		{60, 33},   // ⌈32.76⌉
		{500, 273}, // 0.546·500 = 273 exactly; no float round-up to 274
		{1000, 546},
	} {
		if got := robotTrainCount(c.n); got != c.want {
			t.Errorf("robotTrainCount(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

func TestReadRobotSmall(t *testing.T) {
	// Two scans, APs "b" and "a" (sorted to a, b); the second scan's
	// second line has another position, which is ignored (first wins).
	// One scan ⇒ ⌈0.546·2⌉ = 2 training scans and no test set.
	in := "\n10.5 b 1 2 -60\r\n10.5   a 1 2 -70\n\n12.0 a 3 4 -85\n12.0 b 9 9 -55\n"
	ds, err := ReadRobot(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if ds.XTest != nil || ds.YTest != nil {
		t.Error("two scans should give no test set")
	}
	if got := strings.Join(ds.OutputNames, ","); got != "a,b" {
		t.Errorf("OutputNames = %s, want a,b", got)
	}
	// Times relative to the first scan: 0 and 1.5 s.
	if ds.X.At(0, 0) != 0 || ds.X.At(1, 0) != 1.5 {
		t.Errorf("times = %v, %v; want 0, 1.5", ds.X.At(0, 0), ds.X.At(1, 0))
	}
	// Signal strengths stay in dBm.
	want := [][]float64{{-70, -60}, {-85, -55}}
	for i := range want {
		for j := range want[i] {
			if got := ds.Y.At(i, j); math.Abs(got-want[i][j]) > 1e-15 {
				t.Errorf("Y[%d,%d] = %v, want %v", i, j, got, want[i][j])
			}
		}
	}
	if ds.Truth.At(1, 0) != 3 || ds.Truth.At(1, 1) != 4 {
		t.Errorf("scan 1 position = (%v, %v), want the first line's (3, 4)", ds.Truth.At(1, 0), ds.Truth.At(1, 1))
	}

	// A scan missing an AP is filled with -92 dBm.
	ds, err = ReadRobot(strings.NewReader("1 a 0 0 -50\n1 b 0 0 -50\n2 a 0 0 -50\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !ds.Imputed[1][1] || ds.Imputed[1][0] || ds.Imputed[0][1] {
		t.Errorf("Imputed = %v, want only [1][1]", ds.Imputed)
	}
	if got := ds.Y.At(1, 1); got != -92 {
		t.Errorf("filled value %v, want -92 dBm", got)
	}
}

func TestReadRobotErrors(t *testing.T) {
	const ok = "1135214648.218000 00:0f:04:02:07:f0 23.40 5.55 -62\n"
	var manyLines, manyAPs strings.Builder
	for i := range MaxRows + 1 { // one scan per line, always the same AP
		fmt.Fprintf(&manyLines, "%d a 0 0 -50\n", i)
	}
	for i := range MaxColumns + 1 { // one scan, all different APs
		fmt.Fprintf(&manyAPs, "1 ap%d 0 0 -50\n", i)
	}
	for _, c := range []struct {
		name, in, want string
	}{
		{"empty", "", "no readings"},
		{"blank", "\n  \n\t\n", "no readings"},
		{"too few fields", ok + "1135214649 aa 1 2\n", "line 2: 4 fields, want 5"},
		{"too many fields", "1 aa 1 2 -50 extra\n", "line 1: 6 fields, want 5"},
		{"bad time", "t aa 1 2 -50\n", `line 1: field 1 (time): "t" is not a number`},
		{"bad x", "1 aa x 2 -50\n", `line 1: field 3 (x): "x" is not a number`},
		{"bad y", "1 aa 1 NaN -50\n", `line 1: field 4 (y): "NaN" is not a finite number`},
		{"bad strength", ok + "1135214648.218000 bb 1 2 -5O\n", `line 2: field 5 (signal strength): "-5O" is not a number`},
		{"infinite strength", "1 aa 1 2 -Inf\n", `field 5 (signal strength): "-Inf" is not a finite`},
		{"time goes back", "2 aa 0 0 -50\n\n1 aa 0 0 -50\n", "line 3: field 1 (time): 1 is earlier than the time on line 1"},
		{"repeated AP", "1 aa 0 0 -50\n1 bb 0 0 -50\n1 aa 0 0 -60\n", "line 3: field 2 (access point): aa already read in this scan on line 1"},
		{"too many lines", manyLines.String(), fmt.Sprintf("line %d: more readings than the limit of %d rows", MaxRows+1, MaxRows)},
		{"too many APs", manyAPs.String(), fmt.Sprintf("line %d: more distinct access points than the limit of %d columns", MaxColumns+1, MaxColumns)},
		{"long line", strings.Repeat("1", 70000) + "\n", "line 1: longer than 65536 bytes"}, // bufio.MaxScanTokenSize
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadRobot(strings.NewReader(c.in))
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "robot: ") {
				t.Errorf("error %q, want prefix %q and %q", err, "robot: ", c.want)
			}
		})
	}
}

func TestLoadRobotErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("1 aa 0 0 loud\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.txt"), "no such file"},
		{bad, "robot " + bad + ": line 1: field 5"}, // the path names the file
		{dir, "is a directory"},
	} {
		_, err := LoadRobot(c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.HasPrefix(err.Error(), "dataset: ") {
			t.Errorf("LoadRobot(%s): err = %v, want %q", c.path, err, c.want)
		}
	}
}

// TestReadRobotSharedData checks the loader on the real uw-floor.txt.
func TestReadRobotSharedData(t *testing.T) {
	path := sharedFile(t, "robot_wireless", "uw-floor.txt")
	ds, err := LoadRobot(path)
	if err != nil {
		t.Fatal(err)
	}
	// From shared/data/robot_wireless/README.md: 394 scans, 30 APs,
	// 215 train + 179 test, 5,503 lines, 11–15 readings per scan,
	// strengths -90 … -34 dBm.
	const scans, aps, train, test, lines = 394, 30, 215, 179, 5503
	if r, c := ds.Y.Dims(); r != train || c != aps {
		t.Errorf("Y is %d×%d, want %d×%d", r, c, train, aps)
	}
	if r, c := ds.YTest.Dims(); r != test || c != aps {
		t.Errorf("YTest is %d×%d, want %d×%d", r, c, test, aps)
	}
	if r, _ := ds.X.Dims(); r != train {
		t.Errorf("X has %d rows, want %d", r, train)
	}
	if r, _ := ds.XTest.Dims(); r != test {
		t.Errorf("XTest has %d rows, want %d", r, test)
	}
	if r, _ := ds.Truth.Dims(); r != scans || len(ds.Imputed) != scans {
		t.Errorf("Positions has %d rows, Filled %d; want %d", r, len(ds.Imputed), scans)
	}
	if len(ds.OutputNames) != aps {
		t.Errorf("%d output names, want %d", len(ds.OutputNames), aps)
	}

	// Times strictly increase from 0, across the train/test boundary too.
	prev := -1.0
	for i := range scans {
		var tm float64
		if i < train {
			tm = ds.X.At(i, 0)
		} else {
			tm = ds.XTest.At(i-train, 0)
		}
		if i == 0 && tm != 0 {
			t.Errorf("first time %v, want 0", tm)
		}
		if tm <= prev {
			t.Errorf("scan %d: time %v not after %v", i, tm, prev)
		}
		prev = tm
	}

	lo, hi := RobotMissingDBm, -34.0 // the fill value and the strongest reading, dBm
	fills := 0
	for i := range scans {
		y, row := ds.Y, i
		if i >= train {
			y, row = ds.YTest, i-train
		}
		read := 0
		for j := range aps {
			v := y.At(row, j)
			if v < lo || v > hi {
				t.Errorf("scan %d, AP %d: %v outside [%v, %v]", i, j, v, lo, hi)
			}
			if ds.Imputed[i][j] {
				fills++
				if v != lo {
					t.Errorf("scan %d, AP %d: filled with %v, want %v", i, j, v, lo)
				}
			} else {
				read++
			}
		}
		if read < 11 || read > 15 {
			t.Errorf("scan %d: %d readings, want 11–15", i, read)
		}
	}
	if fills != scans*aps-lines { // 11,820 cells - 5,503 readings = 6,317
		t.Errorf("%d fill-ins, want %d", fills, scans*aps-lines)
	}

	// The first line: 1135214648.218000 00:0f:04:02:07:f0 23.40 5.55 -62.
	j := slices.Index(ds.OutputNames, "00:0f:04:02:07:f0")
	if j < 0 {
		t.Fatalf("AP 00:0f:04:02:07:f0 missing from %q", ds.OutputNames)
	}
	if !slices.IsSorted(ds.OutputNames) {
		t.Errorf("OutputNames not sorted: %q", ds.OutputNames)
	}
	if got, want := ds.Y.At(0, j), -62.0; got != want || ds.Imputed[0][j] {
		t.Errorf("Y[0,%d] = %v (filled %v), want %v read", j, got, ds.Imputed[0][j], want)
	}
	if ds.Truth.At(0, 0) != 23.40 || ds.Truth.At(0, 1) != 5.55 {
		t.Errorf("first position (%v, %v), want (23.40, 5.55)", ds.Truth.At(0, 0), ds.Truth.At(0, 1))
	}
}
