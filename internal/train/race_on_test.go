//go:build race

package train

// raceBuild: the race detector slows a fit about fifteenfold
// (TestForecastBoundsRobot: 6.5 s, 105 s under -race), so the real-data
// fits that only check a measurement skip under it.
const raceBuild = true
