package dataset

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Robot WiFi data conventions, as in the GPy/pods loaders and the robot
// experiment of Hensman & Lawrence (2014).
const (
	// RobotTrainScans is the number of training scans in the conventional
	// split of the 394-scan uw-floor.txt data; the other 179 are the test set.
	RobotTrainScans = 215
	// RobotMissingDBm is the signal strength, in dBm, that stands in for an
	// access point missing from a scan (below the receiver's floor of -90).
	RobotMissingDBm = -92.0

	robotStandardScans = 394 // scans in uw-floor.txt
)

// robotTrainCount returns the number of training scans among n: 215 for
// the standard 394 scans, otherwise the first ⌈0.546·n⌉ (215/394 ≈ 0.546).
func robotTrainCount(n int) int {
	if n == robotStandardScans {
		return RobotTrainScans
	}
	return (546*n + 999) / 1000
}

// robotRule says what a robot file is, for the errors of files that are not.
const robotRule = "plain text, one reading per line: time, access point, x, y, signal strength in dBm, as uw-floor.txt"

// robotFields names the five fields of a robot line, for error messages.
var robotFields = [5]string{"time", "access point", "x", "y", "signal strength"}

// robotScan is one scan: the readings sharing a time stamp.
type robotScan struct {
	time     float64
	x, y     float64
	readings map[string]robotReading // by access point
}

type robotReading struct {
	dBm  float64
	line int
}

// LoadRobot reads the robot WiFi file at path; see ReadRobot. The data
// set's Source is the public file when path holds it (loadFile).
func LoadRobot(path string) (*Dataset, error) { return loadFile("robot", path, readRobot) }

// ReadRobot reads robot WiFi signal-strength data in the format of
// uw-floor.txt (Ferris, Fox & Lawrence, WiFi-SLAM using Gaussian process
// latent variable models, IJCAI 2007).
//
// The input is plain text, one reading per line, five fields separated by
// white space: Unix time in seconds, access point identifier (a MAC
// address), true robot x and y in metres, and signal strength in dBm.
// Blank lines are ignored. Lines must be sorted by time; consecutive lines
// with the same time form one scan, in which an access point may appear at
// most once. The position of a scan is that of its first line.
//
// The data set has one row per scan in time order and one output column per
// access point, in sorted order of identifier (OutputNames). A reading
// missing from a scan is filled with RobotMissingDBm and marked in Filled.
// Strengths are converted with RobotScale. The single input is the time in
// seconds since the first scan. The first RobotTrainScans scans are the
// training set when there are 394 scans (the uw-floor.txt convention);
// otherwise the first ⌈0.546·n⌉ of n scans are. The remaining scans, if any,
// are the test set. Truth holds the true positions of all scans, in metres.
func ReadRobot(r io.Reader) (*Dataset, error) {
	return readRobot(r, "robot")
}

// readRobot implements ReadRobot; src names the input in errors.
func readRobot(r io.Reader, src string) (*Dataset, error) {
	lineErr := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s: line %d: %s", src, line, fmt.Sprintf(format, args...))
	}

	var (
		scans    []*robotScan
		aps      = make(map[string]bool)
		line     int
		readings int
		prevLine int // line of the previous reading
	)
	br := bufio.NewReader(newLimitReader(r, maxFileSize))
	if head, _ := br.Peek(len(matMagic)); string(head) == matMagic {
		return nil, fmt.Errorf("%s: this is a MATLAB MAT-file, not a robot file (%s); the Frey faces' MAT-file is read with frey:PATH", src, robotRule)
	}
	sc := bufio.NewScanner(br)
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		readings++
		if readings > MaxRows {
			return nil, lineErr(line, "more readings than the limit of %d rows", MaxRows)
		}
		if len(f) != len(robotFields) {
			return nil, lineErr(line, "%d fields, want %d (%s)", len(f), len(robotFields), strings.Join(robotFields[:], ", "))
		}
		var v [5]float64
		for i, s := range f {
			if i == 1 {
				continue // access point
			}
			x, msg := parseNumber(s)
			if msg != "" {
				return nil, lineErr(line, "field %d (%s): %s", i+1, robotFields[i], msg)
			}
			v[i] = x
		}
		t, ap := v[0], f[1]

		var cur *robotScan
		if n := len(scans); n > 0 {
			cur = scans[n-1]
		}
		switch {
		case cur != nil && t < cur.time:
			return nil, lineErr(line, "field 1 (time): %s is earlier than the time on line %d; lines must be sorted by time", f[0], prevLine)
		case cur == nil || t > cur.time:
			cur = &robotScan{time: t, x: v[2], y: v[3], readings: make(map[string]robotReading)}
			scans = append(scans, cur)
		}
		if prev, ok := cur.readings[ap]; ok {
			return nil, lineErr(line, "field 2 (access point): %s already read in this scan on line %d", ap, prev.line)
		}
		if !aps[ap] {
			if len(aps) == MaxColumns {
				return nil, lineErr(line, "more distinct access points than the limit of %d columns", MaxColumns)
			}
			aps[ap] = true
		}
		cur.readings[ap] = robotReading{dBm: v[4], line: line}
		prevLine = line
	}
	if err := sc.Err(); err != nil {
		switch {
		case errors.Is(err, errTooLarge):
			return nil, sizeError(src, maxFileSize)
		case errors.Is(err, bufio.ErrTooLong):
			return nil, lineErr(line+1, "longer than %d bytes: not a robot file (%s)", bufio.MaxScanTokenSize, robotRule)
		}
		return nil, fmt.Errorf("%s: %w", src, openError(err))
	}
	if len(scans) == 0 {
		return nil, fmt.Errorf("%s: no readings", src)
	}

	names := make([]string, 0, len(aps))
	for ap := range aps {
		names = append(names, ap)
	}
	slices.Sort(names)
	col := make(map[string]int, len(names))
	for j, ap := range names {
		col[ap] = j
	}

	n, d := len(scans), len(names)
	t0 := scans[0].time
	times := make([]float64, n)
	y := make([]float64, n*d)
	pos := make([]float64, 2*n)
	filled := make([][]bool, n)
	for i, s := range scans {
		times[i] = s.time - t0
		pos[2*i], pos[2*i+1] = s.x, s.y
		row := y[i*d : (i+1)*d]
		filled[i] = make([]bool, d)
		for j := range row {
			row[j] = RobotMissingDBm
			filled[i][j] = true
		}
		for ap, rd := range s.readings {
			j := col[ap]
			row[j] = rd.dBm
			filled[i][j] = false
		}
	}

	nTrain := robotTrainCount(n)
	ds := &Dataset{
		Name: "robot",
		Description: fmt.Sprintf("Robot WiFi signal strengths: %d scans × %d access points in dBm, missing = %g dBm; input time; %d train / %d test scans (Ferris, Fox & Lawrence, IJCAI 2007)",
			n, d, RobotMissingDBm, nTrain, n-nTrain),
		X:           mat.NewDense(nTrain, 1, times[:nTrain:nTrain]),
		Y:           mat.NewDense(nTrain, d, y[:nTrain*d:nTrain*d]),
		InputNames:  []string{"time"},
		OutputNames: names,
		InputUnit:   "s",
		OutputUnit:  "dBm",
		RowName:     "scan",
		Truth:       mat.NewDense(n, 2, pos),
		TruthNames:  []string{"truth_x", "truth_y"},
		TruthUnit:   "m",
		Imputed:     filled,
	}
	if nTrain < n {
		ds.XTest = mat.NewDense(n-nTrain, 1, times[nTrain:])
		ds.YTest = mat.NewDense(n-nTrain, d, y[nTrain*d:])
	}
	return ds, nil
}
