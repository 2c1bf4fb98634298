package train

import (
	"os"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/dataset"
)

// TestSVIWalkStudy is the measurement of docs/measurements.md, "Stochastic
// fits of a long walk": a walk of DGPVIZ_SVI_WALK rows (time → 30 beacons,
// noise 2 dBm, every 10th row held out; walkData) fitted by the robot
// preset's model (one start, no restart selection) with DGPVIZ_SVI_METHOD
// (svi or lbfgs; default svi, minibatches of DefaultStochasticBatch), one
// evaluator worker. It logs the held-out RMSE with the process's CPU time
// (the RMSE's own not counted) at every check (SVI) and every
// DGPVIZ_SVI_QUALITY_EVERY iterations (default 10; for SVI set it above
// the check interval to see the checks alone), and stops at DGPVIZ_SVI_TARGET dBm (default 2.2) or
// DGPVIZ_SVI_MAXITERS steps. By hand:
//
//	DGPVIZ_SVI_WALK=100000 go test -run TestSVIWalkStudy -v -timeout 2h ./internal/train/
func TestSVIWalkStudy(t *testing.T) {
	n := envInt(t, "DGPVIZ_SVI_WALK", 0)
	if n == 0 {
		t.Skip("a measurement: set DGPVIZ_SVI_WALK=rows (see the comment)")
	}
	var method Method = SVI{}
	if v := os.Getenv("DGPVIZ_SVI_METHOD"); v != "" {
		var err error
		if method, err = ParseMethod(strings.ToLower(v)); err != nil {
			t.Fatal(err)
		}
	}
	target := 2.2
	if v := envInt(t, "DGPVIZ_SVI_TARGET_CENTI", 0); v > 0 {
		target = float64(v) / 100
	}
	maxIters := envInt(t, "DGPVIZ_SVI_MAXITERS", 5000)
	every := envInt(t, "DGPVIZ_SVI_QUALITY_EVERY", 10)
	xa, ya := walkData(n, 30, 1)
	xt, xh := splitEvery(xa, 10)
	yt, yh := splitEvery(ya, 10)
	nx, ny := dataset.FitNormalizer(xt), dataset.FitNormalizer(yt)
	cpu0, wall0 := cpuSeconds(), time.Now()
	m, err := Initialize(nx.Apply(xt), ny.Apply(yt), RobotPreset(1).Init)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTrainer(m, RobotPreset(1).Trainer(TrainerConfig{Method: method, Workers: 1, Seed: 1}))
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := xt.Dims()
	c := cpuSeconds()
	t.Logf("%s: %d rows, the start: held-out RMSE %.3f dBm", method, rows, heldOutRMSE(t, m, nx, ny, xh, yh))
	skipped := cpuSeconds() - c // CPU seconds spent on the RMSE
	for range maxIters {
		info, err := tr.Step()
		if err != nil {
			t.Fatal(err)
		}
		measure := !info.Estimate && method == (SVI{}) || info.Iter%every == 0 || info.Status.Terminated()
		if !measure {
			continue
		}
		c := cpuSeconds()
		rmse := heldOutRMSE(t, tr.Model(), nx, ny, xh, yh)
		skipped += cpuSeconds() - c
		epochs := info.Epochs
		if method != (SVI{}) {
			epochs = float64(info.Iter) // a full-batch iteration is one pass
		}
		t.Logf("%s: %d rows, iteration %d, %.2f epochs, CPU %.1f s, wall %.1f s, bound %.8g, held-out RMSE %.3f dBm, %v",
			method, rows, info.Iter, epochs, c-cpu0-skipped, time.Since(wall0).Seconds(), info.Bound, rmse, info.Status)
		if rmse <= target || info.Status.Terminated() {
			break
		}
	}
}

// BenchmarkSVIStep times one SVI step (a minibatch of
// DefaultStochasticBatch rows, no check) of the robot preset's model on a
// walk of 100,000 rows, and BenchmarkSVICheck one check (the full-data
// bound in chunks), with their allocations.
func BenchmarkSVIStep(b *testing.B)  { benchmarkSVI(b, false) }
func BenchmarkSVICheck(b *testing.B) { benchmarkSVI(b, true) }

func benchmarkSVI(b *testing.B, check bool) {
	x, y := walkData(100_000, 30, 1)
	nx, ny := dataset.FitNormalizer(x), dataset.FitNormalizer(y)
	m, err := Initialize(nx.Apply(x), ny.Apply(y), RobotPreset(1).Init)
	if err != nil {
		b.Fatal(err)
	}
	tr, err := NewTrainer(m, TrainerConfig{Method: SVI{}, Workers: 1, Window: 1_000_000})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tr.Step(); err != nil { // the start's evaluation
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if check {
			var info StepInfo
			tr.sviCheck(&info)
			continue
		}
		if _, err := tr.Step(); err != nil {
			b.Fatal(err)
		}
	}
}
