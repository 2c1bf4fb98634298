//go:build race

package train

// raceBuild: the race detector slows a fit about fifteenfold
// (TestForecastBoundsRobot: 6.5 s, 105 s under -race), so the tests that
// fit to convergence on one goroutine skip under it and run in the second
// part of README's test command, without it (secondPart).
const raceBuild = true
