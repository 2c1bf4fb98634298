package main

import "dgpviz/internal/train"

// presetWithin fits the preset's restart selection into a budget of iters
// iterations for the whole fit (-iters) and returns the preset to start
// with and the iterations left for fitting the chosen restart. With room
// for the selection and more, it runs as the preset says; with less, its
// restarts share half the budget; with fewer than two iterations per
// restart, there is no selection: the first restart's start is fitted.
func presetWithin(p train.Preset, iters int) (train.Preset, int) {
	r, ri := p.Restarts, p.RestartIters
	switch {
	case r <= 1 || ri <= 0:
		return p, iters
	case iters > r*ri:
		return p, iters - r*ri
	case iters >= 2*r:
		p.RestartIters = iters / 2 / r
		return p, iters - r*p.RestartIters
	}
	p.Restarts, p.RestartIters = 1, 0
	return p, iters
}

// totalIters is the iterations of a whole fit: every restart's, and the
// chosen one's continued fit when there was one (final, else nil).
func totalIters(reps []train.RestartReport, final *train.FitReport) int {
	n := 0
	for _, r := range reps {
		n += r.Report.Iters
	}
	if final != nil {
		n += final.Iters
	}
	return n
}
