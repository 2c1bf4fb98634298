package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/train"
)

// TestETARecordedRobot replays the steps of the robot preset's fits,
// recorded in testdata by internal/train's TestRecordRobotSteps, through
// viz fit's progress, on a clock of the cost model's time per evaluation
// (the two restarts side by side on two cores, then the continued fit
// alone), and judges the ETA a progress bar would draw every 100 ms
// against the time then left: every bound holds, and after the start-up
// (the restarts and the continued fit's first window, "estimating…")
// the time stated holds (etaHeld) on at least the share of the lines
// measured when the forecast was chosen (docs/measurements.md, "A point
// ETA").
func TestETARecordedRobot(t *testing.T) {
	for _, tc := range []struct {
		seed     int
		held     float64 // share of the time-stated lines within 2× (or both under 2 s)
		estimate float64 // share of the lines "estimating…" at most
	}{
		{2, 0.9, 0.3},
		{3, 0.75, 0.2},
	} {
		t.Run(fmt.Sprint("seed ", tc.seed), func(t *testing.T) {
			steps, perIter := readRecordedSteps(t, fmt.Sprintf("testdata/eta-robot-seed%d.txt", tc.seed))
			const restarts, restartIters = 2, 200
			p := newProgress(io.Discard, restarts, restartIters, train.DefaultMaxIters-restarts*restartIters, train.DefaultWindow)
			p.par = 2
			var clock float64 // seconds
			p.clock = func() time.Time { return time.Unix(0, 0).Add(time.Duration(clock * float64(time.Second))) }
			took := func(s recordedStep) float64 { // the clock's time of a step
				if s.slot < restarts {
					return perIter * float64(s.s.Evals) / restarts
				}
				return perIter * float64(s.s.Evals)
			}
			var end float64
			for _, s := range steps {
				end += took(s)
			}
			type line struct {
				at float64
				l  etaLeft
				ok bool
			}
			var lines []line
			next := 0.0
			for _, s := range steps {
				clock += took(s)
				p.step(s.slot, s.s)
				if clock >= next || s.s.Status.Terminated() {
					next = clock + 0.1
					l, ok := p.timeLeft(p.clock())
					lines = append(lines, line{clock, l, ok})
				}
			}
			estimating, points, held, first := 0, 0, 0, -1.0
			for _, ln := range lines {
				left := end - ln.at
				if ln.ok && (left < ln.l.lo*(1-1e-9) || ln.l.hiKnown && left > ln.l.hi*(1+1e-9)) {
					t.Errorf("at %.2f s: %.3f s left, outside the ETA's %.3f to %.3f s", ln.at, left, ln.l.lo, ln.l.hi)
				}
				point, ok := etaHeld(t, etaText(ln.l), left)
				if !ln.ok || !point {
					estimating++
					continue
				}
				if first < 0 {
					first = ln.at
				}
				points++
				if ok {
					held++
				}
			}
			share := float64(held) / float64(max(points, 1))
			t.Logf("%d lines in %.2f s (cost model); estimating at %d, a time from %.2f s (%.0f %%), which held at %d of %d (%.2f)", len(lines), end, estimating, first, 100*first/end, held, points, share)
			if share < tc.held {
				t.Errorf("the time stated held at %d of %d lines (%.2f), want %.2f", held, points, share, tc.held)
			}
			if e := float64(estimating) / float64(len(lines)); e > tc.estimate {
				t.Errorf("estimating at %d of %d lines (%.2f), want at most %.2f", estimating, len(lines), e, tc.estimate)
			}
		})
	}
}

type recordedStep struct {
	slot int
	s    train.StepInfo
}

// readRecordedSteps reads a trace written by internal/train's
// TestRecordRobotSteps, and the cost model's seconds an iteration from
// its header.
func readRecordedSteps(t *testing.T, path string) ([]recordedStep, float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var steps []recordedStep
	perIter := math.NaN()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if h, ok := strings.CutPrefix(line, "#"); ok {
			if _, after, ok := strings.Cut(h, "cost model "); ok {
				perIter, err = strconv.ParseFloat(strings.Fields(after)[0], 64)
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
			}
			continue
		}
		fs := strings.Fields(line)
		if len(fs) != 9 {
			t.Fatalf("%s: %q: want 9 fields", path, line)
		}
		var v [9]float64
		for i, s := range fs {
			if v[i], err = strconv.ParseFloat(s, 64); err != nil {
				t.Fatalf("%s: %q: %v", path, line, err)
			}
		}
		st := train.StepInfo{Iter: int(v[1]), Evals: int(v[2]), Bound: v[3], Rise: v[4], Expected: v[5], Limit: v[6], Status: train.Status(v[7])}
		if v[8] != 0 {
			st.Event = "a divergence event"
		}
		steps = append(steps, recordedStep{int(v[0]), st})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if math.IsNaN(perIter) || len(steps) == 0 {
		t.Fatalf("%s: no cost model header or no steps", path)
	}
	return steps, perIter
}
