package train

// presetTrainer is the configuration of the fit that continues from a
// preset's restarts (TestTimeToTarget; the build before the presets had
// optimizer settings returns c).
func presetTrainer(p Preset, c TrainerConfig) TrainerConfig { return p.Trainer(c) }
