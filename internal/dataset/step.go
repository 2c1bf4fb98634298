package dataset

import "gonum.org/v1/gonum/mat"

// stepX and stepY are the 30 points of the noisy step function of
// Hensman & Lawrence (2014), Nested Variational Compression in Deep Gaussian
// Processes, step-function experiment; values as distributed with the paper.
// The inputs are x = i/29 for i = 0, ..., 29 to 15 significant digits; the
// outputs are 0 for x < 0.5 and 1 for x > 0.5 plus noise.
var stepX = [...]float64{
	0,
	0.0344827586206896,
	0.0689655172413793,
	0.103448275862069,
	0.137931034482759,
	0.172413793103448,
	0.206896551724138,
	0.241379310344828,
	0.275862068965517,
	0.310344827586207,
	0.344827586206897,
	0.379310344827586,
	0.413793103448276,
	0.448275862068965,
	0.482758620689655,
	0.517241379310345,
	0.551724137931034,
	0.586206896551724,
	0.620689655172414,
	0.655172413793103,
	0.689655172413793,
	0.724137931034483,
	0.758620689655172,
	0.793103448275862,
	0.827586206896552,
	0.862068965517241,
	0.896551724137931,
	0.931034482758621,
	0.96551724137931,
	1,
}

var stepY = [...]float64{
	0.00480755177651519,
	0.00954424471134621,
	-0.0254630580388837,
	0.0310929817801382,
	0.0349264958169793,
	-0.0270507333419196,
	-0.0217430031252698,
	-0.0250896097066597,
	0.0249386823582826,
	-0.0466705060812323,
	0.00260954138435669,
	0.0298698319183808,
	0.000761584988140691,
	0.0242831143942044,
	-0.000715789737214675,
	0.986235145248351,
	1.00038983548784,
	1.00655462965101,
	0.931558620335998,
	1.00263469679235,
	0.989521577579133,
	1.01530874527295,
	1.01088003470569,
	1.03758984926622,
	1.01691420485221,
	0.996536913189708,
	1.01706143761017,
	0.996925127543056,
	0.979836909040802,
	0.99177048985369,
}

// Step returns the built-in data set, the paper's 30-point noisy step
// function: one input x in [0, 1], one output y, no held-out set.
// Each call returns a new Dataset that the caller may modify.
func Step() *Dataset {
	n := len(stepX)
	return &Dataset{
		Name:        "step",
		Description: "Noisy step function, 30 points (Hensman & Lawrence (2014), Nested Variational Compression in Deep Gaussian Processes, step-function experiment)",
		X:           mat.NewDense(n, 1, append([]float64(nil), stepX[:]...)),
		Y:           mat.NewDense(n, 1, append([]float64(nil), stepY[:]...)),
		InputNames:  []string{"x"},
		OutputNames: []string{"y"},
	}
}
