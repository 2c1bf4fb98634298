//go:build race

package web

// raceEnabled: the race detector slows a fit about eightfold; tests whose
// cost is fits and that share nothing between goroutines skip under it
// (.ci/run runs them without it).
const raceEnabled = true
