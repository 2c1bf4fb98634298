package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"strconv"
	"syscall"
	"time"

	"dgpviz/internal/engine"
	"dgpviz/internal/latent"
	"dgpviz/internal/train"
)

// fitTrace writes viz fit -trace's table: at every check of a stochastic
// fit, the held-out RMSE of the model the fit would return if it stopped
// there (its best checked point), with the time the fit had taken. The
// clocks start with the fit, after the data are loaded, and exclude the
// trace's own predictions, so that a time to a target error is the fit's
// alone; a preset's restarts before the traced fit are in them.
type fitTrace struct {
	f     *os.File
	w     *csv.Writer
	h     *latent.HeldOut
	start time.Time
	cpu0  float64
	// ownWall and ownCPU are the time of the trace's predictions so far.
	ownWall time.Duration
	ownCPU  float64
	last    *engine.Model // the model of the last row, to reuse its RMSE
	rmse    float64
	err     error
}

// fitTraceHeader is the trace's CSV header.
var fitTraceHeader = []string{"iteration", "epochs", "cpu_s", "wall_s", "bound", "heldout_rmse"}

// newFitTrace creates the trace file path for held-out set h (its RMSE in
// the outputs' original units), with clocks started at start and cpu0.
func newFitTrace(path string, h *latent.HeldOut, start time.Time, cpu0 float64) (*fitTrace, error) {
	if h == nil {
		return nil, fmt.Errorf("-trace needs held-out rows (a split column whose test rows the fit leaves out)")
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	t := &fitTrace{f: f, w: csv.NewWriter(f), h: h, start: start, cpu0: cpu0, rmse: math.NaN()}
	t.w.Write(fitTraceHeader)
	return t, nil
}

// checked is train.FitOptions.Checked: one row of the table.
func (t *fitTrace) checked(m *engine.Model, s train.StepInfo) {
	if t.err != nil {
		return
	}
	wall, cpu := time.Now(), cpuSeconds()
	if m != t.last {
		a, err := latent.Analyze(m, nil, t.h, latent.AnalyzeOptions{Workers: 1})
		if err != nil {
			t.err = err
			return
		}
		t.last, t.rmse = m, a.TestRMSE
	}
	// The row's times are those before the prediction, less the earlier
	// predictions'.
	fitCPU := cpu - t.cpu0 - t.ownCPU
	fitWall := wall.Sub(t.start) - t.ownWall
	t.ownCPU += cpuSeconds() - cpu
	t.ownWall += time.Since(wall)
	t.w.Write([]string{strconv.Itoa(s.Iter), fmtTrace(s.Epochs), fmtTrace(fitCPU), fmtTrace(fitWall.Seconds()), fmtTrace(s.Bound), fmtTrace(t.rmse)})
	t.w.Flush()
	t.err = t.w.Error()
}

// close flushes and closes the trace file, and reports its first error.
func (t *fitTrace) close() error {
	t.w.Flush()
	err := t.err
	if err == nil {
		err = t.w.Error()
	}
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	return err
}

func fmtTrace(v float64) string { return strconv.FormatFloat(v, 'g', 7, 64) }

// cpuSeconds is the process's user and system CPU time, every thread's.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
