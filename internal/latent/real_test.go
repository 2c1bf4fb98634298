package latent

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"dgpviz/internal/dataset"

	"gonum.org/v1/gonum/mat"
)

// robotTrain loads the first 215 scans' true positions of the real robot
// data, or skips when ../shared/data is absent.
func robotTrain(t *testing.T) (*dataset.Dataset, *mat.Dense) {
	t.Helper()
	path, _ := filepath.Abs("../../../shared/data/robot_wireless/uw-floor.txt")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("shared data not found at %s: skipping the real-data test", path)
	}
	d, err := dataset.LoadRobot(path)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := d.X.Dims()
	return d, mat.DenseCopyOf(d.Truth.Slice(0, n, 0, 2))
}

// TestRealPathScores pins the scale on the real robot path: the true
// positions score high and a time-only latent scores low.
func TestRealPathScores(t *testing.T) {
	_, pos := robotTrain(t)
	n, _ := pos.Dims()
	rule := RuleFor(pos)
	t.Logf("rule for the real path: %d scans apart, within %.3f m", rule.MinLag, rule.Radius)
	if rule.MinLag != 54 || math.Abs(rule.Radius-2.257) > 0.001 {
		t.Errorf("rule %+v, want 54 scans (a quarter of 215) and 2.257 m (5 × the median step of 0.4514 m)", rule)
	}
	truth, err := LoopClosure(pos, pos, rule)
	if err != nil {
		t.Fatal(err)
	}
	timeOnly, err := LoopClosure(TimeFeatures(n, 3), pos, rule)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("real path: truth %.3f, time only %.3f (%d revisits of %d far pairs)", truth.Value, timeOnly.Value, truth.Revisits, truth.FarPairs)
	if truth.Value < 0.95 || timeOnly.Value > 0.3 {
		t.Errorf("truth %.3f (want ≥ 0.95), time only %.3f (want ≤ 0.3)", truth.Value, timeOnly.Value)
	}
}
