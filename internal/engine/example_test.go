package engine_test

import (
	"fmt"

	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// tinyModel is a one-layer GP on five points of sin(x), with inducing
// points at four of them and q(u) = N(sin(z), 0.01·I).
func tinyModel() *engine.Model {
	x := mat.NewDense(5, 1, []float64{-1, -0.5, 0, 0.5, 1})
	y := mat.NewDense(5, 1, []float64{-0.84, -0.48, 0, 0.48, 0.84})
	qs := mat.NewDense(4, 4, nil)
	for i := 0; i < 4; i++ {
		qs.Set(i, i, 0.1)
	}
	return &engine.Model{Jitter: 1e-6, X: x, Y: y, Layers: []*engine.Layer{{
		Kernel:         engine.NewRBF(1, []float64{0.8}),
		NoiseVariance:  0.01,
		InducingInputs: mat.NewDense(4, 1, []float64{-1, -0.4, 0.3, 1}),
		QMu:            mat.NewDense(4, 1, []float64{-0.84, -0.39, 0.3, 0.84}),
		QSqrt:          []*mat.Dense{qs},
	}}}
}

// The bound, its terms and its gradient.
func ExampleEvaluator_Evaluate() {
	var ev engine.Evaluator
	res, grad, err := ev.Evaluate(tinyModel(), engine.Options{Gradient: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	t := res.Layers[0]
	fmt.Printf("bound %.4f = likelihood %.4f − KL %.4f − compression %.4f − propagation %.4f\n",
		res.Bound, res.Likelihood, t.KL, t.Compression, t.Propagation)
	fmt.Printf("∂bound/∂noise %.4f\n", grad.Layers[0].NoiseVariance)
	// Output:
	// bound -2.5292 = likelihood 4.5328 − KL 6.7309 − compression 0.3310 − propagation 0.0000
	// ∂bound/∂noise 21.6451
}

// Every layer's Gaussian message at new, certain inputs. A message's
// variance is the noise plus what q(u) leaves uncertain: far from the
// inducing points (x = 3) it is about the noise alone, and the function's
// prior variance there is what the compression term charges for.
func ExampleEvaluator_Predict() {
	var ev engine.Evaluator
	msgs, err := ev.Predict(tinyModel(), mat.NewDense(2, 1, []float64{0.25, 3}))
	if err != nil {
		fmt.Println(err)
		return
	}
	out := msgs[len(msgs)-1]
	for i := 0; i < 2; i++ {
		fmt.Printf("mean %.4f, variance %.4f\n", out.Mean.At(i, 0), out.Var.At(i, 0))
	}
	// Output:
	// mean 0.2508, variance 0.0196
	// mean 0.0538, variance 0.0104
}

// A layer's latent function at a certain input, without the noise.
func ExampleLayerPosterior_FunctionAt() {
	m := tinyModel()
	p, err := engine.NewLayerPosterior(m.Layers[0], m.Jitter)
	if err != nil {
		fmt.Println(err)
		return
	}
	mean, varU := make([]float64, 1), make([]float64, 1)
	varCond := p.FunctionAt([]float64{0.5}, nil, mean, varU)
	fmt.Printf("f(0.5): mean %.4f, variance from q(u) %.4f + given u %.4f\n", mean[0], varU[0], varCond)
	// Output:
	// f(0.5): mean 0.4909, variance from q(u) 0.0101 + given u 0.0029
}

// Moving an inducing input keeps the function: q(u) is re-projected from
// the current posterior, so the bound changes little; keeping q(u) as it
// was moves the function with the point.
func ExampleMoveInducing() {
	m := tinyModel()
	var ev engine.Evaluator
	before, _, _ := ev.Evaluate(m, engine.Options{})
	moved, err := engine.MoveInducing(m, 0, 2, []float64{0.6}) // from 0.3
	if err != nil {
		fmt.Println(err)
		return
	}
	kept, _ := engine.MoveInducingKeepU(m, 0, 2, []float64{0.6})
	a, _, _ := ev.Evaluate(moved, engine.Options{})
	b, _, _ := ev.Evaluate(kept, engine.Options{})
	fmt.Printf("bound %.3f; moved, projected %.3f; moved, q(u) kept %.3f\n", before.Bound, a.Bound, b.Bound)
	fmt.Printf("the new inducing output %.4f\n", moved.Layers[0].QMu.At(2, 0))
	// Output:
	// bound -2.529; moved, projected -3.082; moved, q(u) kept -10.083
	// the new inducing output 0.5800
}
