package train

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOptimizerStudy measures the optimizer's settings as time to a
// target: for a case (step3, robot or frey, as TestTimeToTarget), each
// L-BFGS memory in DGPVIZ_OPT_MEMORY and natural-gradient steps for the
// hidden layers off and on, the evaluations, iterations and CPU seconds
// until the bound first reaches DGPVIZ_OPT_TARGET, from seeds 1…
// DGPVIZ_OPT_SEEDS (seed 1 the preset's or Initialize's start, later ones
// perturbed by DefaultPerturb, as FitRestarts's restarts), and where the
// stopping rule ended the fit. Run with DGPVIZ_OPT=case; it logs a line per
// setting and asserts only that every fit ran.
func TestOptimizerStudy(t *testing.T) {
	name := os.Getenv("DGPVIZ_OPT")
	if name == "" {
		t.Skip("a measurement of minutes: set DGPVIZ_OPT=step3|robot|frey (see the comment)")
	}
	target, err := strconv.ParseFloat(os.Getenv("DGPVIZ_OPT_TARGET"), 64)
	if err != nil {
		t.Fatalf("DGPVIZ_OPT_TARGET: %v", err)
	}
	seeds, _ := strconv.Atoi(os.Getenv("DGPVIZ_OPT_SEEDS"))
	seeds = max(seeds, 1)
	mems := []int{lbfgsMemory}
	if v := os.Getenv("DGPVIZ_OPT_MEMORY"); v != "" {
		mems = nil
		for _, s := range strings.Split(v, ",") {
			k, err := strconv.Atoi(s)
			if err != nil || k < 1 {
				t.Fatalf("DGPVIZ_OPT_MEMORY=%q", v)
			}
			mems = append(mems, k)
		}
	}
	ngs := []bool{false, true}
	if v := os.Getenv("DGPVIZ_OPT_NG"); v != "" {
		ngs = []bool{v == "on"}
	}
	shared, _ := filepath.Abs("../../../shared/data")
	defer func(k int) { lbfgsMemory = k }(lbfgsMemory)
	for _, mem := range mems {
		lbfgsMemory = mem
		for _, ng := range ngs {
			var runs []string
			for seed := 1; seed <= seeds; seed++ {
				c := tttCase(t, name, uint64(seed), shared)
				icfg := InitConfig{Hidden: c.hidden, Inducing: 15, Seed: uint64(seed)}
				if c.preset != nil {
					icfg = c.preset.Init
				}
				if seed > 1 {
					icfg.Perturb = DefaultPerturb
				}
				m, err := Initialize(c.x, c.y, icfg)
				if err != nil {
					t.Fatal(err)
				}
				cpu0 := cpuSeconds()
				tr, err := NewTrainer(m, TrainerConfig{Workers: 1, NaturalGradient: ng})
				if err != nil {
					t.Fatal(err)
				}
				evals, hit := 0, ""
				var info StepInfo
				for k := 1; k <= DefaultMaxIters; k++ {
					if info, err = tr.Step(); err != nil {
						t.Fatal(err)
					}
					evals += info.Evals
					if hit == "" && info.Bound >= target {
						hit = fmt.Sprintf("%d ev %d it %.1f s", evals, k, cpuSeconds()-cpu0)
					}
					if info.Status.Terminated() {
						break
					}
				}
				if hit == "" {
					hit = "never"
				}
				runs = append(runs, fmt.Sprintf("seed %d: target %s; stopped (%s) at %.6g after %d it, %d ev, %.1f s", seed, hit, info.Status, info.Bound, info.Iter, evals, cpuSeconds()-cpu0))
			}
			t.Logf("%s memory %d natural gradient %v:\n\t%s", name, mem, ng, strings.Join(runs, "\n\t"))
		}
	}
}
