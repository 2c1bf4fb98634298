package shards

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"dgpviz/internal/engine"
)

// The payloads: a request to evaluate rows of the data at parameters,
// and a worker's reply. Both are binary, little-endian; floats are
// float64 bit for bit, so a shard's part is what its evaluation gave.
//
//	request: "DGPQ" kind:u8 flags:u8 seq:u64 lo:u64 hi:u64 chunk:u32
//	         jitter:f64 data:[32]u8 layers:u32
//	         (kernel:u8 m:u32 q:u32 d:u32)×layers params:u32 f64×params
//	         kind batch part: batch:u32 rows:u32 u32×rows
//	reply:   "DGPR" seq:u64 lo:u64 hi:u64 worker:u16+bytes status:u8 …
//	         status ok, kind stats: m:u32 d:u32 f64×(2·m·m + m·d)
//	         status ok, kind part:  layers:u32 likelihood:f64
//	                                (kl compression propagation:f64)×layers
//	                                grad:u32 f64×grad
//	         status failed: kind:u8 message:u16+bytes

// Kind is what a request asks for.
type Kind uint8

const (
	// Stats asks for the final layer's statistics of the rows
	// (engine.FinalStats).
	Stats Kind = iota + 1
	// Part asks for the rows' part of the bound (engine.EvaluateRange).
	Part
	// BatchPart asks for the part of a minibatch's rows within the range
	// (engine.EvaluateBatchPart).
	BatchPart
)

const (
	flagGradient = 1 << iota
	flagKL
	flagNoCompensation
)

// A request asks a worker for the part of rows Lo…Hi−1 of the data
// whose sha256 is Data, at the model that Layers and Params describe.
type request struct {
	Kind     Kind
	Gradient bool // Part: with the gradient
	KL       bool // Part: with the KL terms
	// NoCompensation is engine.Options.NoCompensation: ΣΨ2 in float64,
	// as the one-process evaluation it stands for takes it.
	NoCompensation bool
	Seq            uint64
	Lo, Hi         int
	Chunk          int
	Jitter         float64
	Data           [32]byte
	Layers         []layerShape
	Params         []float64
	// Rows, of a BatchPart, are the minibatch's rows within Lo…Hi−1, of
	// a minibatch of Batch rows.
	Rows  []int
	Batch int
}

// layerShape is what a worker needs to build a layer before it sets its
// parameters: its kernel and sizes.
type layerShape struct {
	Kernel  string
	M, Q, D int
}

var kernelCodes = []string{1: "rbf", 2: "rbfiso", 3: "linear"}

// Failure kinds of a reply: the engine's errors, which the optimizer
// handles (a raised jitter, a shorter step), travel as themselves.
const (
	failOther uint8 = iota
	failNotPositiveDefinite
	failNotFinite
	failImprecise
	failNoData
)

// reply is a worker's answer to a request.
type reply struct {
	Seq    uint64
	Lo, Hi int
	Worker string
	Err    error // failed: the worker's error, its kind restored (replyError)

	Stats *engine.FinalStats // Stats
	Part  *partSums          // Part
}

// partSums are the scalars and gradient of an engine.Part as they travel.
type partSums struct {
	Likelihood float64
	Layers     []engine.LayerTerms
	Gradient   []float64 // flat (engine.Gradient.Flatten); nil without
}

// replyError is a worker's error in a reply: its message, and the
// engine's error it wraps, if any.
type replyError struct {
	worker, msg string
	kind        uint8
}

func (e *replyError) Error() string { return "worker " + e.worker + ": " + e.msg }

func (e *replyError) Unwrap() error {
	switch e.kind {
	case failNotPositiveDefinite:
		return engine.ErrNotPositiveDefinite
	case failNotFinite:
		return engine.ErrNotFinite
	case failImprecise:
		return engine.ErrImprecise
	case failNoData:
		return errNoData
	}
	return nil
}

// errNoData is a worker's answer to a request for data it has not read
// (it started after the coordinator told the others): the coordinator
// sends it the data's description and asks again.
var errNoData = errors.New("the worker has not read the fit's data")

func failKind(err error) uint8 {
	switch {
	case errors.Is(err, engine.ErrNotPositiveDefinite):
		return failNotPositiveDefinite
	case errors.Is(err, engine.ErrNotFinite):
		return failNotFinite
	case errors.Is(err, engine.ErrImprecise):
		return failImprecise
	case errors.Is(err, errNoData):
		return failNoData
	}
	return failOther
}

// Limits of a decoded payload, so that a hostile one costs little: the
// engine's own limits on the model's sizes.
const (
	maxLayers  = 64
	maxWorker  = 64
	maxMessage = 1024
)

func (r *request) encode() []byte {
	b := make([]byte, 0, 64+17*len(r.Layers)+8*len(r.Params))
	b = append(b, "DGPQ"...)
	var flags uint8
	if r.Gradient {
		flags |= flagGradient
	}
	if r.KL {
		flags |= flagKL
	}
	if r.NoCompensation {
		flags |= flagNoCompensation
	}
	b = append(b, uint8(r.Kind), flags)
	b = binary.LittleEndian.AppendUint64(b, r.Seq)
	b = binary.LittleEndian.AppendUint64(b, uint64(r.Lo))
	b = binary.LittleEndian.AppendUint64(b, uint64(r.Hi))
	b = binary.LittleEndian.AppendUint32(b, uint32(r.Chunk))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.Jitter))
	b = append(b, r.Data[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Layers)))
	for _, l := range r.Layers {
		code := 0
		for c, name := range kernelCodes {
			if name == l.Kernel {
				code = c
			}
		}
		b = append(b, uint8(code))
		b = binary.LittleEndian.AppendUint32(b, uint32(l.M))
		b = binary.LittleEndian.AppendUint32(b, uint32(l.Q))
		b = binary.LittleEndian.AppendUint32(b, uint32(l.D))
	}
	b = appendFloats(b, r.Params)
	if r.Kind == BatchPart {
		b = binary.LittleEndian.AppendUint32(b, uint32(r.Batch))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Rows)))
		for _, row := range r.Rows {
			b = binary.LittleEndian.AppendUint32(b, uint32(row))
		}
	}
	return b
}

func appendFloats(b []byte, v []float64) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

// decoder reads a payload, remembering the first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

func (d *decoder) take(n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.fail("it ends within %s", what)
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) u8(what string) uint8 {
	if v := d.take(1, what); v != nil {
		return v[0]
	}
	return 0
}

func (d *decoder) u32(what string) int {
	if v := d.take(4, what); v != nil {
		return int(binary.LittleEndian.Uint32(v))
	}
	return 0
}

// row reads a row number, at most engine.MaxData.
func (d *decoder) row(what string) int {
	v := d.take(8, what)
	if v == nil {
		return 0
	}
	x := binary.LittleEndian.Uint64(v)
	if x > engine.MaxData {
		d.fail("%s is %d, beyond the %d rows of the largest data", what, x, engine.MaxData)
		return 0
	}
	return int(x)
}

func (d *decoder) u64(what string) uint64 {
	if v := d.take(8, what); v != nil {
		return binary.LittleEndian.Uint64(v)
	}
	return 0
}

func (d *decoder) f64(what string) float64 {
	return math.Float64frombits(d.u64(what))
}

// floats reads a count and that many floats, the count at most max and,
// when want ≥ 0, exactly want.
func (d *decoder) floats(what string, want int) []float64 {
	n := d.u32(what + "'s length")
	if d.err == nil && want >= 0 && n != want {
		d.fail("%s has %d values, want %d", what, n, want)
	}
	raw := d.take(8*n, what)
	if raw == nil {
		return nil
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
	}
	return v
}

func (d *decoder) text(what string, max int) string {
	v := d.take(2, what+"'s length")
	if v == nil {
		return ""
	}
	n := int(binary.LittleEndian.Uint16(v))
	if n > max {
		d.fail("%s of %d bytes, more than %d", what, n, max)
	}
	return string(d.take(n, what))
}

func (d *decoder) end() {
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d bytes after its end", len(d.b))
	}
}

// decodeRequest reads a request, checking every size against the
// engine's limits before it allocates.
func decodeRequest(b []byte) (*request, error) {
	d := &decoder{b: b}
	if string(d.take(4, "its magic")) != "DGPQ" {
		return nil, errors.New("not a request of a sharded fit")
	}
	r := &request{Kind: Kind(d.u8("its kind"))}
	flags := d.u8("its flags")
	r.Gradient, r.KL, r.NoCompensation = flags&flagGradient != 0, flags&flagKL != 0, flags&flagNoCompensation != 0
	r.Seq = d.u64("its number")
	r.Lo, r.Hi = d.row("its first row"), d.row("its last row")
	r.Chunk = d.u32("its chunk")
	r.Jitter = d.f64("its jitter")
	copy(r.Data[:], d.take(32, "its data's sha256"))
	layers := d.u32("its layers")
	if d.err == nil && (layers < 1 || layers > maxLayers) {
		d.fail("%d layers, want 1 to %d", layers, maxLayers)
	}
	params := 0
	for i := 0; i < layers && d.err == nil; i++ {
		code := int(d.u8("a kernel"))
		l := layerShape{M: d.u32("M"), Q: d.u32("Q"), D: d.u32("D")}
		if code < 1 || code >= len(kernelCodes) {
			d.fail("layer %d: kernel %d, want 1 (rbf), 2 (rbfiso) or 3 (linear)", i+1, code)
			break
		}
		l.Kernel = kernelCodes[code]
		if l.M < 1 || l.M > engine.MaxInducing || l.Q < 1 || l.Q > engine.MaxDim || l.D < 1 || l.D > engine.MaxDim {
			d.fail("layer %d: %d inducing points, %d inputs, %d outputs: want 1 to %d, %d, %d", i+1, l.M, l.Q, l.D, engine.MaxInducing, engine.MaxDim, engine.MaxDim)
			break
		}
		if i > 0 && l.Q != r.Layers[i-1].D {
			d.fail("layer %d has %d inputs, layer %d %d outputs", i+1, l.Q, i, r.Layers[i-1].D)
			break
		}
		// At least this many parameters: the model it describes is
		// allocated only when they are all in the payload.
		params += l.M*l.Q + l.M*l.D + l.D*l.M*(l.M+1)/2 + 2
		r.Layers = append(r.Layers, l)
	}
	if d.err == nil && 8*params > len(d.b) {
		d.fail("its %d parameters cannot be in %d bytes", params, len(d.b))
	}
	r.Params = d.floats("its parameters", -1)
	if r.Kind == BatchPart {
		r.Batch = d.u32("its minibatch's size")
		rows := d.u32("its rows")
		if d.err == nil && (rows < 1 || rows > r.Batch || 4*rows > len(d.b)) {
			d.fail("%d rows of a minibatch of %d in %d bytes", rows, r.Batch, len(d.b))
		}
		for i := 0; i < rows && d.err == nil; i++ {
			row := d.u32("a row")
			if row < r.Lo || row >= r.Hi {
				d.fail("row %d outside its range %d to %d", row+1, r.Lo+1, r.Hi)
			}
			r.Rows = append(r.Rows, row)
		}
	}
	d.end()
	switch {
	case d.err != nil:
	case r.Kind != Stats && r.Kind != Part && r.Kind != BatchPart:
		d.fail("kind %d, want 1 (statistics), 2 (a part) or 3 (a minibatch's part)", r.Kind)
	case r.Lo >= r.Hi:
		d.fail("rows %d to %d: want a range of at least one row", r.Lo+1, r.Hi)
	case r.Chunk < 1:
		d.fail("chunk of %d rows: want at least 1", r.Chunk)
	}
	if d.err != nil {
		return nil, fmt.Errorf("a malformed request: %w", d.err)
	}
	return r, nil
}

func (r *reply) encode() []byte {
	b := make([]byte, 0, 64)
	b = append(b, "DGPR"...)
	b = binary.LittleEndian.AppendUint64(b, r.Seq)
	b = binary.LittleEndian.AppendUint64(b, uint64(r.Lo))
	b = binary.LittleEndian.AppendUint64(b, uint64(r.Hi))
	b = appendText(b, r.Worker)
	switch {
	case r.Err != nil:
		b = append(b, 1, failKind(r.Err))
		msg := r.Err.Error()
		if len(msg) > maxMessage {
			msg = msg[:maxMessage]
		}
		return appendText(b, msg)
	case r.Stats != nil:
		b = append(b, 0)
		m := int(math.Sqrt(float64(len(r.Stats.Phi))))
		b = binary.LittleEndian.AppendUint32(b, uint32(m))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Stats.VtY)/max(m, 1)))
		b = appendFloats(b, r.Stats.Phi)
		b = appendFloats(b, r.Stats.PhiLo)
		return appendFloats(b, r.Stats.VtY)
	default:
		b = append(b, 0)
		p := r.Part
		b = binary.LittleEndian.AppendUint32(b, uint32(len(p.Layers)))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.Likelihood))
		for _, t := range p.Layers {
			for _, v := range []float64{t.KL, t.Compression, t.Propagation} {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
			}
		}
		return appendFloats(b, p.Gradient)
	}
}

func appendText(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// decodeReply reads a worker's reply to req, of which it must be the
// answer: its number, rows and worker, and the sizes of req's model. A
// failed reply decodes to a reply whose Err is the worker's error.
func decodeReply(b []byte, req *request, worker string) (*reply, error) {
	d := &decoder{b: b}
	if string(d.take(4, "its magic")) != "DGPR" {
		return nil, errors.New("not the reply of a sharded fit's worker")
	}
	r := &reply{Seq: d.u64("its number"), Lo: d.row("its first row"), Hi: d.row("its last row")}
	r.Worker = d.text("its worker", maxWorker)
	status := d.u8("its status")
	if d.err == nil && (r.Seq != req.Seq || r.Lo != req.Lo || r.Hi != req.Hi || r.Worker != worker) {
		d.fail("the answer to another request (evaluation %d, rows %d to %d, worker %q; asked: %d, %d to %d, %q)", r.Seq, r.Lo+1, r.Hi, r.Worker, req.Seq, req.Lo+1, req.Hi, worker)
	}
	last := req.Layers[len(req.Layers)-1]
	switch {
	case d.err != nil:
	case status == 1:
		kind := d.u8("its error's kind")
		r.Err = &replyError{worker: worker, kind: kind, msg: d.text("its error", maxMessage)}
	case status != 0:
		d.fail("status %d, want 0 (done) or 1 (failed)", status)
	case req.Kind == Stats:
		m, dd := d.u32("M"), d.u32("D")
		if d.err == nil && (m != last.M || dd != last.D) {
			d.fail("statistics of %d inducing points and %d outputs, the model's final layer has %d and %d", m, dd, last.M, last.D)
		}
		if d.err == nil {
			r.Stats = &engine.FinalStats{Phi: d.floats("Φ", m*m), PhiLo: d.floats("Φ's rounding", m*m), VtY: d.floats("Ψ1ᵀY", m*dd)}
		}
	default:
		layers := d.u32("its layers")
		if d.err == nil && layers != len(req.Layers) {
			d.fail("%d layers, the model has %d", layers, len(req.Layers))
		}
		p := &partSums{Likelihood: d.f64("its likelihood")}
		for i := 0; i < layers && d.err == nil; i++ {
			p.Layers = append(p.Layers, engine.LayerTerms{KL: d.f64("a KL"), Compression: d.f64("a compression"), Propagation: d.f64("a propagation")})
		}
		want := 0
		if req.Gradient {
			want = len(req.Params)
		}
		if g := d.floats("its gradient", want); want > 0 {
			p.Gradient = g
		}
		r.Part = p
	}
	d.end()
	if d.err != nil {
		return nil, fmt.Errorf("worker %s sent a malformed reply: %w", worker, d.err)
	}
	return r, nil
}
