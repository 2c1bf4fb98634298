package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// closeRel reports whether a and b agree to tol relative to the larger of
// |a|, |b| and floor (the scale below which an entry is a cancellation).
func closeRel(a, b, tol, floor float64) bool {
	return math.Abs(a-b) <= tol*max(math.Abs(a), math.Abs(b), floor)
}

// compareResults fails t where the chunked result got differs from the
// full evaluation want beyond tol relative: the bound, every term, every
// per-datum penalty and message entry, the final q(u) and every gradient
// entry.
func compareResults(t *testing.T, name string, want, got *Result, wg, gg *Gradient, tol float64) {
	t.Helper()
	check := func(what string, a, b, floor float64) {
		t.Helper()
		if !closeRel(a, b, tol, floor) {
			t.Errorf("%s: %s chunked %.17g, full %.17g (relative %.2g)", name, what, b, a, math.Abs(a-b)/max(math.Abs(a), floor))
		}
	}
	slice := func(what string, a, b []float64) {
		t.Helper()
		if len(a) != len(b) {
			t.Errorf("%s: %s has %d entries chunked, %d full", name, what, len(b), len(a))
			return
		}
		// An entry's scale is at least 1e-2 of its array's largest: a
		// mean near zero, or the penalty of a datum near an inducing
		// input, is a difference of far larger parts, and the chunks sum
		// the statistics behind them (the optimal q(u)) in another order.
		var big float64
		for _, v := range a {
			big = max(big, math.Abs(v))
		}
		for i := range a {
			if !closeRel(a[i], b[i], tol, 1e-2*big) {
				t.Errorf("%s: %s[%d] chunked %.17g, full %.17g (largest %.3g)", name, what, i, b[i], a[i], big)
				return
			}
		}
	}
	dense := func(what string, a, b *mat.Dense) {
		t.Helper()
		if (a == nil) != (b == nil) {
			t.Errorf("%s: %s is nil in one result only (full %v)", name, what, a == nil)
			return
		}
		if a != nil {
			slice(what, a.RawMatrix().Data, b.RawMatrix().Data)
		}
	}
	check("bound", want.Bound, got.Bound, 0)
	check("likelihood", want.Likelihood, got.Likelihood, 0)
	for i, l := range want.Layers {
		gl := got.Layers[i]
		check(fmt.Sprintf("layer %d's KL", i+1), l.KL, gl.KL, 0)
		// A certain input's layer has no propagation: the scale of its
		// zero is the bound's.
		check(fmt.Sprintf("layer %d's compression", i+1), l.Compression, gl.Compression, 1e-6*math.Abs(want.Bound))
		check(fmt.Sprintf("layer %d's propagation", i+1), l.Propagation, gl.Propagation, 1e-6*math.Abs(want.Bound))
		slice(fmt.Sprintf("layer %d's compression per datum", i+1), l.CompressionPerDatum, gl.CompressionPerDatum)
		slice(fmt.Sprintf("layer %d's propagation per datum", i+1), l.PropagationPerDatum, gl.PropagationPerDatum)
		dense(fmt.Sprintf("layer %d's message mean", i+1), want.Messages[i].Mean, got.Messages[i].Mean)
		dense(fmt.Sprintf("layer %d's message variance", i+1), want.Messages[i].Var, got.Messages[i].Var)
	}
	if (want.FinalQ == nil) != (got.FinalQ == nil) {
		t.Fatalf("%s: FinalQ nil in one result only (full %v)", name, want.FinalQ == nil)
	}
	if want.FinalQ != nil {
		dense("the final q_mu", want.FinalQ.Mu, got.FinalQ.Mu)
		dense("the final q_sqrt", want.FinalQ.Sqrt, got.FinalQ.Sqrt)
	}
	if (wg == nil) != (gg == nil) {
		t.Fatalf("%s: gradient nil in one result only (full %v)", name, wg == nil)
	}
	if wg == nil {
		return
	}
	for i, l := range wg.Layers {
		gl := gg.Layers[i]
		slice(fmt.Sprintf("layer %d's kernel gradient", i+1), l.Kernel, gl.Kernel)
		check(fmt.Sprintf("layer %d's noise gradient", i+1), l.NoiseVariance, gl.NoiseVariance, 0)
		dense(fmt.Sprintf("layer %d's inducing-input gradient", i+1), l.InducingInputs, gl.InducingInputs)
		dense(fmt.Sprintf("layer %d's q_mu gradient", i+1), l.QMu, gl.QMu)
		for k := range l.QSqrt {
			dense(fmt.Sprintf("layer %d's q_sqrt %d gradient", i+1, k+1), l.QSqrt[k], gl.QSqrt[k])
		}
	}
}

// TestEvaluateChunkedEqualsEvaluate: the bound, its terms, messages,
// per-datum penalties and gradient of a chunked evaluation are the full
// evaluation's, on models of one to three layers with every kernel, with
// and without the optimal final q(u), for chunks that divide N and that
// do not, a chunk of one row and one larger than the data.
func TestEvaluateChunkedEqualsEvaluate(t *testing.T) {
	const n = 120
	models := []struct {
		widths  []int
		kernels []string
	}{
		{[]int{2, 3}, []string{"rbf"}},
		{[]int{1, 2, 4}, []string{"rbfiso", "rbf"}},
		{[]int{1, 3, 2, 5}, []string{"rbf", "linear", "rbf"}},
		{[]int{2, 2, 3, 2}, []string{"linear", "rbf", "rbfiso"}},
	}
	chunks := []int{1, 7, 40, 50, n, 1000}
	if testing.Short() {
		chunks = []int{7, 40}
	}
	for mi, mc := range models {
		rng := rand.New(rand.NewPCG(35, uint64(mi)))
		m := RandomModel(rng, n, mc.widths, mc.kernels, 9)
		for _, optQ := range []bool{false, true} {
			opt := Options{Gradient: true, OutputVariance: true, OptimalFinalQ: optQ}
			want, wg := mustEval(t, m, opt)
			for _, c := range chunks {
				var e Evaluator
				got, gg, err := e.EvaluateChunked(m, opt, c)
				if err != nil {
					t.Fatalf("%v, chunk %d: %v", mc.widths, c, err)
				}
				compareResults(t, fmt.Sprintf("%v %v optimal q %v, chunk %d", mc.widths, mc.kernels, optQ, c), want, got, wg, gg, 1e-10)
			}
		}
	}
}

// TestEvaluateChunkedOptions: without the gradient and without the output
// message, a chunked evaluation leaves out what Evaluate leaves out.
func TestEvaluateChunkedOptions(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 9))
	m := RandomModel(rng, 90, []int{1, 3, 4}, []string{"rbf", "rbf"}, 8)
	for _, opt := range []Options{{}, {NoOutputMessage: true}, {OptimalFinalQ: true, NoOutputMessage: true}, {Gradient: true, NoOutputMessage: true, OptimalFinalQ: true}} {
		want, wg := mustEval(t, m, opt)
		var e Evaluator
		got, gg, err := e.EvaluateChunked(m, opt, 25)
		if err != nil {
			t.Fatal(err)
		}
		compareResults(t, fmt.Sprintf("%+v", opt), want, got, wg, gg, 1e-10)
		if opt.NoOutputMessage && got.Messages[1].Mean != nil {
			t.Errorf("%+v: the output message is kept", opt)
		}
	}
}

// TestEvaluateChunkedWorkers: like Evaluate, a chunked evaluation gives
// the same bits for any number of workers.
func TestEvaluateChunkedWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 10))
	m := RandomModel(rng, 700, []int{1, 3, 2, 4}, []string{"rbf", "rbf", "rbf"}, 10)
	var want []float64
	var wantBound float64
	for _, workers := range []int{1, 2, 3} {
		e := Evaluator{Workers: workers}
		r, g, err := e.EvaluateChunked(m, Options{Gradient: true, OptimalFinalQ: true}, 300)
		if err != nil {
			t.Fatal(err)
		}
		got := g.Flatten(nil)
		if want == nil {
			want, wantBound = got, r.Bound
			continue
		}
		if r.Bound != wantBound {
			t.Errorf("workers=%d: bound %v, serial %v", workers, r.Bound, wantBound)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("workers=%d: gradient[%d] %v, serial %v", workers, i, got[i], want[i])
			}
		}
	}
}

// TestEvaluateChunkedErrors: a chunk of no rows and a minibatch are
// refused with a message.
func TestEvaluateChunkedErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 11))
	m := RandomModel(rng, 20, []int{1, 2}, []string{"rbf"}, 4)
	var e Evaluator
	if _, _, err := e.EvaluateChunked(m, Options{}, 0); err == nil {
		t.Error("a chunk of 0 rows: no error")
	}
	if _, _, err := e.EvaluateChunked(m, Options{Rows: []int{1, 2}}, 10); err == nil {
		t.Error("a minibatch: no error")
	}
}

// liveAfter returns the bytes of heap that stay live after f, with what
// f returns (an Evaluator with its workspace, a Result) kept alive.
func liveAfter(f func() any) int64 {
	var a, b runtime.MemStats
	settleHeap()
	runtime.ReadMemStats(&a)
	v := f()
	runtime.GC()
	runtime.ReadMemStats(&b)
	runtime.KeepAlive(v)
	return int64(b.HeapAlloc) - int64(a.HeapAlloc)
}

// outputBytes is the size of the per-datum outputs of a chunked
// evaluation of n rows of m with opt: every layer's two penalties, and
// its message's mean and variance where they are kept.
func outputBytes(m *Model, n int, opt Options) uint64 {
	var words int
	last := len(m.Layers) - 1
	for i, l := range m.Layers {
		_, _, d := l.Dims()
		words += 2 * n
		if i == last && opt.NoOutputMessage {
			continue
		}
		words += n * d
		if i < last || opt.OutputVariance {
			words += n * d
		}
	}
	return uint64(8 * words)
}

// TestEvaluateChunkedWorkspace: what a chunked evaluation keeps — the
// Evaluator's workspace and the Result — grows with the rows by the
// per-datum outputs alone, where a full evaluation's workspace grows with
// N (Ψ1, the messages' variance factors, the backward pass's ∂Ψ1:
// O(N·M·D)).
func TestEvaluateChunkedWorkspace(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 12))
	const n, chunk = 2000, 500
	big := RandomModel(rng, 4*n, []int{1, 3, 3, 30}, []string{"rbf", "rbf", "rbf"}, 15)
	small := &Model{Jitter: big.Jitter, X: big.X.Slice(0, n, 0, 1).(*mat.Dense), Y: big.Y.Slice(0, n, 0, 30).(*mat.Dense), Layers: big.Layers}
	opt := Options{Gradient: true, NoOutputMessage: true, OptimalFinalQ: true}
	eval := func(m *Model, chunked bool) func() any {
		return func() any {
			e := &Evaluator{Workers: 1}
			var r *Result
			var err error
			if chunked {
				r, _, err = e.EvaluateChunked(m, opt, chunk)
			} else {
				r, _, err = e.Evaluate(m, opt)
			}
			if err != nil {
				t.Fatal(err)
			}
			return []any{e, r}
		}
	}
	outputs := int64(outputBytes(big, 4*n, opt) - outputBytes(small, n, opt))
	grew := liveAfter(eval(big, true)) - liveAfter(eval(small, true))
	fullGrew := liveAfter(eval(big, false)) - liveAfter(eval(small, false))
	t.Logf("from %d to %d rows: chunked +%d bytes live, full +%d, per-datum outputs +%d", n, 4*n, grew, fullGrew, outputs)
	// A quarter of the outputs' growth is allowed beside them: the race
	// detector's allocations add about a tenth (946 KB against 864 KB),
	// and a workspace of N would add fifteen times as much.
	if grew > outputs+outputs/4 {
		t.Errorf("a chunked evaluation of %d rows keeps %d bytes more than of %d rows, its outputs %d more", 4*n, grew, n, outputs)
	}
	// The measure can tell: a full evaluation's workspace grows with N.
	if fullGrew < 3*outputs {
		t.Errorf("a full evaluation of %d rows keeps only %d bytes more than of %d rows (outputs %d): the test cannot tell workspace from outputs", 4*n, fullGrew, n, outputs)
	}
}

// peakRSS returns the process's peak resident set size in bytes
// (/proc/self/status VmHWM), or 0 where there is none.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// resetPeakRSS starts VmHWM again from the current RSS (Linux), so that a
// sub-benchmark's peak is its own.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// BenchmarkMillion evaluates the bound and gradient (the final q(u) at its
// optimum, as the trainer does) of a robot-shaped model (1 → 3 → 3 → 30,
// 15 inducing points per layer) at a million rows, in chunks of
// DefaultChunkRows and, for comparison, all at once; it reports the
// process's peak RSS during the evaluations and the data's size. Run it
// alone: go test -run='^$' -bench=Million -benchtime=1x ./internal/engine
func BenchmarkMillion(b *testing.B) {
	if testing.Short() {
		b.Skip("a million rows: not in -short")
	}
	const n = 1000000
	rng := rand.New(rand.NewPCG(35, 13))
	m := RandomModel(rng, n, []int{1, 3, 3, 30}, []string{"rbf", "rbf", "rbf"}, 15)
	opt := Options{Gradient: true, NoOutputMessage: true, OptimalFinalQ: true}
	data := float64(8 * n * (1 + 30))
	for _, c := range []struct {
		name  string
		chunk int
	}{{"chunked", DefaultChunkRows}, {"full", 0}} {
		b.Run(c.name, func(b *testing.B) {
			runtime.GC()
			resetPeakRSS()
			b.ReportAllocs()
			for range b.N {
				e := Evaluator{}
				var err error
				if c.chunk > 0 {
					_, _, err = e.EvaluateChunked(m, opt, c.chunk)
				} else {
					_, _, err = e.Evaluate(m, opt)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(peakRSS())/1e6, "peak-RSS-MB")
			b.ReportMetric(data/1e6, "data-MB")
		})
	}
}

// TestPredictChunks: Predict of more inputs than DefaultChunkRows, which
// it takes in chunks, gives every input the bits it gets predicted alone
// with its neighbours (another chunk's position), and EvaluateChunked's
// messages are Predict's.
func TestPredictChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 14))
	n := DefaultChunkRows + 300
	m := RandomModel(rng, n, []int{1, 2, 3}, []string{"rbfiso", "rbf"}, 6)
	var e Evaluator
	all, err := e.Predict(m, m.X)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := DefaultChunkRows-100, DefaultChunkRows+50 // across the chunks' border
	part, err := e.Predict(m, m.X.Slice(lo, hi, 0, 1).(*mat.Dense))
	if err != nil {
		t.Fatal(err)
	}
	for i := range all {
		_, d := all[i].Mean.Dims()
		for r := lo; r < hi; r++ {
			for c := 0; c < d; c++ {
				if a, b := all[i].Mean.At(r, c), part[i].Mean.At(r-lo, c); a != b {
					t.Fatalf("layer %d, row %d: mean %v among all, %v among rows %d…%d", i+1, r+1, a, b, lo+1, hi)
				}
				if a, b := all[i].Var.At(r, c), part[i].Var.At(r-lo, c); a != b {
					t.Fatalf("layer %d, row %d: variance %v among all, %v among rows %d…%d", i+1, r+1, a, b, lo+1, hi)
				}
			}
		}
	}
	res, _, err := e.EvaluateChunked(m, Options{OutputVariance: true}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for i := range all {
		if !mat.EqualApprox(all[i].Mean, res.Messages[i].Mean, 1e-12) || !mat.EqualApprox(all[i].Var, res.Messages[i].Var, 1e-12) {
			t.Errorf("layer %d: the chunked evaluation's message is not Predict's", i+1)
		}
	}
}

// TestEvaluateAll: above ChunkAbove rows EvaluateAll is the chunked
// evaluation (its bits), below it and for a minibatch Evaluate's.
func TestEvaluateAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 15))
	m := RandomModel(rng, ChunkAbove+7, []int{1, 2, 1}, []string{"rbf", "rbf"}, 5)
	opt := Options{Gradient: true, OptimalFinalQ: true, NoOutputMessage: true}
	var e Evaluator
	all, _, err := e.EvaluateAll(m, opt)
	if err != nil {
		t.Fatal(err)
	}
	chunked, _, err := e.EvaluateChunked(m, opt, DefaultChunkRows)
	if err != nil {
		t.Fatal(err)
	}
	if all.Bound != chunked.Bound {
		t.Errorf("%d rows: EvaluateAll's bound %v, the chunked %v", ChunkAbove+7, all.Bound, chunked.Bound)
	}
	rows := []int{3, 1, 4, 1, 5}
	mb, _, err := e.EvaluateAll(m, Options{Rows: rows})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := mustEval(t, m, Options{Rows: rows})
	if mb.Bound != want.Bound {
		t.Errorf("a minibatch: EvaluateAll's bound %v, Evaluate's %v", mb.Bound, want.Bound)
	}
}

// BenchmarkEvaluateChunked: the bound and gradient of a robot-shaped model
// at 65,536 rows, all at once and in chunks of several sizes: what the
// chunks' repeated work (the parameter gradient's chain, per chunk) costs.
func BenchmarkEvaluateChunked(b *testing.B) {
	rng := rand.New(rand.NewPCG(35, 16))
	m := RandomModel(rng, 1<<16, []int{1, 3, 3, 30}, []string{"rbf", "rbf", "rbf"}, 15)
	opt := Options{Gradient: true, NoOutputMessage: true, OptimalFinalQ: true}
	for _, chunk := range []int{0, 1024, DefaultChunkRows} {
		name := "all"
		if chunk > 0 {
			name = fmt.Sprintf("chunk=%d", chunk)
		}
		b.Run(name, func(b *testing.B) {
			var e Evaluator
			b.ReportAllocs()
			for range b.N {
				var err error
				if chunk > 0 {
					_, _, err = e.EvaluateChunked(m, opt, chunk)
				} else {
					_, _, err = e.Evaluate(m, opt)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
