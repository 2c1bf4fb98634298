package train

import (
	"os"
	"testing"
)

// presetTrainer is the configuration of the fit that continues from a
// preset's restarts (TestTimeToTarget; the build before the presets had
// optimizer settings returns c).
func presetTrainer(p Preset, c TrainerConfig) TrainerConfig { return p.Trainer(c) }

// robotPresetFor is TestTimeToTarget's robot preset: RobotPreset(seed),
// with DGPVIZ_TTT_NG=on|off, DGPVIZ_TTT_RESTARTS and
// DGPVIZ_TTT_RESTART_ITERS overriding its natural gradients, its restarts
// and their length, and DGPVIZ_TTT_PERTURB=on perturbing its start as
// FitRestarts perturbs every restart after the first (with
// DGPVIZ_TTT_RESTARTS=1 and seed s+r, r ≥ 2: restart r of seed s alone). The
// build before returns RobotPreset(seed).
func robotPresetFor(t *testing.T, seed uint64) Preset {
	p := RobotPreset(seed)
	if v := os.Getenv("DGPVIZ_TTT_NG"); v != "" {
		p.NaturalGradient = v == "on"
	}
	if os.Getenv("DGPVIZ_TTT_PERTURB") == "on" {
		p.Init.Perturb = DefaultPerturb
	}
	p.Restarts = envInt(t, "DGPVIZ_TTT_RESTARTS", p.Restarts)
	p.RestartIters = envInt(t, "DGPVIZ_TTT_RESTART_ITERS", p.RestartIters)
	return p
}
