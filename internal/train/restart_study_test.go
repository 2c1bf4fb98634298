package train

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPresetRestartStudy chooses a preset's restart length: for seeds 1…3
// it runs the preset's restarts (FitRestarts's starts: the seed's, the
// other first-hidden-layer start perturbed, and a perturbed one) each for
// up to DGPVIZ_RESTART_ITERS iterations (default 3000) and logs each
// restart's bound after 25, 50, 100, 200, 300, 500 and 1000 iterations and
// at the end, with the first hidden layer's geometry score for the robot:
// the restart length must be long enough that the restart best by bound
// then is the one best by bound at the end. Run with
// DGPVIZ_RESTART_STUDY=robot or frey; it asserts only that the fits ran.
func TestPresetRestartStudy(t *testing.T) {
	name := os.Getenv("DGPVIZ_RESTART_STUDY")
	if name == "" {
		t.Skip("a study of many minutes: set DGPVIZ_RESTART_STUDY=robot or frey")
	}
	iters := 3000
	if v := os.Getenv("DGPVIZ_RESTART_ITERS"); v != "" {
		fmt.Sscan(v, &iters)
	}
	ng := os.Getenv("DGPVIZ_RESTART_NG") == "on"
	shared, _ := filepath.Abs("../../../shared/data")
	marks := []int{25, 50, 100, 200, 300, 500, 1000}
	for _, seed := range []uint64{1, 2, 3} {
		c := tttCase(t, name, seed, shared)
		var lines []string
		_, _, reps, err := FitRestarts(context.Background(), c.x, c.y, c.preset.Init, TrainerConfig{Workers: 1, NaturalGradient: ng},
			FitOptions{MaxIters: iters}, c.preset.Restarts, func(r int, s StepInfo) {
				for _, k := range marks {
					if s.Iter == k {
						lines = append(lines, fmt.Sprintf("restart %d at %d: %.6g", r+1, k, s.Bound))
					}
				}
			})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range reps {
			q := c.quality(t, r.Model)
			_, inputs := c.x.Dims()
			lines = append(lines, fmt.Sprintf("restart %d (%s, perturb %g) end: %.7g after %d iterations (%s), %v",
				r.Restart+1, r.Init.FirstHiddenStart(inputs), r.Init.Perturb, r.Report.Bound, r.Report.Iters, r.Report.Status, q))
		}
		t.Logf("%s seed %d (natural gradient %v):\n\t%s", name, seed, ng, strings.Join(lines, "\n\t"))
	}
}
