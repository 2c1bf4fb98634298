package engine

// Cost estimates what evaluating a model's bound and gradient takes, from
// its shape alone, before the model is built: the server refuses a
// configuration whose estimate exceeds its budgets (internal/stream).
type Cost struct {
	// Bytes is the working set of an Evaluator computing the bound and
	// gradient (its per-layer buffers, results and gradient), not counting
	// the data and the model themselves (see ModelBytes).
	Bytes int64
	// Flops is the floating-point work of one bound-and-gradient
	// evaluation (multiply-adds count 2, an exp about 20).
	Flops float64
	// Forward is the part of Bytes an evaluation of the bound alone
	// holds without the output layer's message (Options.NoOutputMessage,
	// no gradient: no backward arena or gradient accumulators).
	Forward int64
}

// EstimateCost returns the cost of a model with widths[0] inputs,
// widths[1:] outputs per layer (hidden widths, then the output dimension),
// n data and m inducing points per layer (capped at n, and for the linear
// kernel at the layer's input width, as initialisation does; pass the
// capped values for a model at hand). It follows the engine's buffer sizes
// (layerwork.go, backward.go) and operation counts (ψ statistics, the Ψ2
// pair loop, the variance products); TestEstimateCostMatchesHeap checks the
// bytes against the measured heap. Above ChunkAbove rows it is the cost of
// an evaluation in chunks of DefaultChunkRows (EvaluateChunked, as the
// trainer evaluates): the workspace of a chunk, and the per-datum results
// of all n rows.
func EstimateCost(n int, widths []int, m int) Cost {
	m = max(min(m, n), 1)
	var words, scratch, flops, backward float64
	// nw: the rows an evaluation's workspace holds at once.
	nw := n
	if n > ChunkAbove {
		nw = DefaultChunkRows
	}
	chunks := float64(numChunks(nw))
	fn, fm, fw := float64(n), float64(m), float64(nw)
	for i := 0; i+1 < len(widths); i++ {
		q, d := float64(widths[i]), float64(widths[i+1])
		pairs := fm * (fm + 1) / 2
		uncertain := i > 0          // a hidden layer's inputs are Gaussian messages
		hidden := i+2 < len(widths) // its output variance feeds the next layer
		// Forward, kept per layer: ψ1, penalties, messages, and for a
		// hidden layer U = Ψ1·Kinv·L behind the output variance.
		words += fw*fm + fw*(2+2*d) + fm*fm*(16+4*d) + 2*fm*d
		flops += fn * fm * q * 30           // ψ1 (an exp per entry)
		flops += 2 * fn * fm * d            // means
		flops += 2 * fn * fm * fm           // Ψ1ᵀΨ1
		flops += 3 * fm * fm * fm * (1 + d) // factorisations, inverse, KL
		if hidden {
			words += fw * fm * d
			flops += 2 * fn * fm * fm * d       // U
			flops += 2 * (2 * fn * fm * fm * d) // ∂U products
		}
		if uncertain {
			// Its input's gradient (dIn, dInVar); a certain input, the
			// data, has none (Frey's 1965 × 560 would be 17 MB).
			words += 2 * fw * q
			words += chunks * pairs * (1 + q)
			flops += fn * pairs * (30 + 8*q) // the Ψ2 pair loop with its gradient
		}
		// Backward, in a scratch arena that the layers take in turn: ∂Ψ1,
		// ∂U and the parameter gradients; chunk accumulators per layer.
		b := fw*fm + fm*fm*(8+3*d)
		if hidden {
			b += fw * fm * d
		}
		scratch = max(scratch, b)
		words += chunks * fm * q
		backward += chunks * fm * q
		flops += fn * fm * q * 20 // ∂ψ1
		// Results: the messages and per-datum terms kept in Result.
		words += fn * (2*d + 2)
		if !hidden {
			// The bound alone with no output message (Forward) keeps
			// neither the output layer's variance nor its message.
			backward += (fw + 2*fn) * d
		}
	}
	return Cost{Bytes: int64(8 * (words + scratch)), Flops: flops, Forward: int64(8 * (words - backward))}
}

// ModelBytes is the size of a model's parameters and data: the inputs and
// outputs (n rows) and per layer the inducing inputs, q(u)'s means and
// Cholesky factors. A session keeps several (the live model, frames'
// snapshots, undo states).
func ModelBytes(n int, widths []int, m int) int64 {
	m = max(min(m, n), 1)
	words := float64(n) * float64(widths[0]+widths[len(widths)-1])
	for i := 0; i+1 < len(widths); i++ {
		q, d := float64(widths[i]), float64(widths[i+1])
		words += float64(m)*(q+d) + d*float64(m)*float64(m)
	}
	return int64(8 * words)
}

// EstimatePredict is the memory in bytes that Evaluator.Predict takes at n
// rows of a model of these widths with m inducing points: every layer's
// forward pass with its output variance over a chunk of at most
// DefaultChunkRows rows — for the output layer too, U = Ψ1·Kinv·L of
// chunk × m × d, which the bound never needs — and the messages of all n
// rows it returns. A view that predicts every row for its frames (the
// latent explorer) holds this beside the optimizer's buffers.
func EstimatePredict(n int, widths []int, m int) int64 {
	m = max(min(m, n), 1)
	fn, fm, fw := float64(n), float64(m), float64(min(n, DefaultChunkRows))
	words := 0.0
	for i := 0; i+1 < len(widths); i++ {
		q, d := float64(widths[i]), float64(widths[i+1])
		words += fw*fm + 3*fw + 2*fw*d + 2*fn*d + fw*fm*d + 4*fm*fm*d
		if i > 0 { // a Gaussian input: its gradients' buffers
			words += 2 * fw * q
		}
	}
	return int64(8 * words)
}
