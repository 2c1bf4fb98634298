//go:build race

package train

// raceBuild: the race detector slows a fit many times over
// (docs/measurements.md), so the tests that
// fit to convergence on one goroutine skip under it and run in the second
// part of README's test command, without it (secondPart).
const raceBuild = true
