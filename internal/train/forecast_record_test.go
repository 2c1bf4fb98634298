package train

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"dgpviz/internal/dataset"
)

// TestRecordRobotSteps writes the steps of the robot preset's fits
// (seeds 2 and 3: restarts side by side, then the best continued to the
// stopping rule, as viz fit runs them) to cmd/viz/testdata, the recorded
// traces cmd/viz's TestETARecordedRobot replays. It runs only with
// DGPVIZ_ETA_RECORD=1 and the shared robot data:
//
//	DGPVIZ_ETA_RECORD=1 go test -count=1 -run TestRecordRobotSteps ./internal/train
//
// Each line is a step: slot (restarts from 0, then the continued fit),
// iteration, evaluations, bound, and the rule's rise, expected rise and
// limit, status and 1 for a divergence event. The header gives the cost
// model's time of an iteration, the replay's clock.
func TestRecordRobotSteps(t *testing.T) {
	if os.Getenv("DGPVIZ_ETA_RECORD") == "" {
		t.Skip("records cmd/viz/testdata's robot traces: set DGPVIZ_ETA_RECORD=1")
	}
	path, _ := filepath.Abs("../../../shared/data/robot_wireless/uw-floor.txt")
	ds, err := dataset.LoadRobot(path)
	if err != nil {
		t.Skipf("shared data not found at %s: %v", path, err)
	}
	x, y := dataset.FitNormalizer(ds.X).Apply(ds.X), dataset.FitNormalizer(ds.Y).Apply(ds.Y)
	for _, seed := range []uint64{2, 3} {
		p := RobotPreset(seed)
		tcfg := TrainerConfig{Workers: 1}
		out, err := os.Create(fmt.Sprintf("../../cmd/viz/testdata/eta-robot-seed%d.txt", seed))
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(out)
		var mu sync.Mutex
		record := func(slot int, s StepInfo) {
			mu.Lock()
			defer mu.Unlock()
			ev := 0
			if s.Event != "" {
				ev = 1
			}
			fmt.Fprintf(w, "%d %d %d %.10g %.6g %.6g %.6g %d %d\n", slot, s.Iter, s.Evals, s.Bound, s.Rise, s.Expected, s.Limit, int(s.Status), ev)
		}
		m, _, err := p.Start(context.Background(), x, y, tcfg, record)
		if err != nil {
			t.Fatal(err)
		}
		m = m.CloneParams()
		tr := p.Trainer(tcfg)
		probe, err := NewTrainer(m.CloneParams(), tr) // the configuration with its defaults
		if err != nil {
			t.Fatal(err)
		}
		n, _ := x.Dims()
		fmt.Fprintf(w, "# robot preset seed %d: restarts %d of %d iterations, rise span %d; cost model %.6g s an iteration\n", seed, p.Restarts, p.RestartIters, probe.Config().RiseSpan(n), tr.IterTime(m).Seconds())
		_, rep, err := Fit(context.Background(), m, tr, FitOptions{MaxIters: DefaultMaxIters - p.Restarts*p.RestartIters, Progress: func(s StepInfo) { record(p.Restarts, s) }})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("seed %d: the continued fit stopped by %v after %d iterations", seed, rep.Status, rep.Iters)
	}
}
