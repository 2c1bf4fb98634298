//go:build race

package loadtest

// raceEnabled: the race detector slows a fit about tenfold, so tests that
// measure live rates skip under it.
const raceEnabled = true
