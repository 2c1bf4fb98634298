package stream

import (
	"fmt"
	"math"
	"time"

	"dgpviz/internal/engine"
	"dgpviz/internal/faces"

	"gonum.org/v1/gonum/mat"
)

// The "decode" op (docs/protocol.md, "Frey faces"): images on demand
// instead of N × 560 reconstructions in every frame. A request names
// latent points (the decoder's predictive mean and variance there, in grey
// levels) and/or frames (the frame itself and the model's reconstruction of
// it: the last layer's message for that frame). It is answered by one
// binary "decoded" message with the request's id, or an error reply.
//
// Requests are served by the session's decode goroutine from the latest
// published model, so they never wait for or slow down the optimizer;
// at most decodeQueue wait, more get an error at once.

// Limits of one decode request.
const (
	MaxDecodePoints = 144 // latent points (a 12 × 12 grid of face tiles)
	MaxDecodeFrames = 16  // frames to reconstruct
	decodeQueue     = 8   // requests waiting for the decode goroutine
)

// decodeHeader is the binary "decoded" message.
type decodeHeader struct {
	V      int    `json:"v"`
	Type   string `json:"type"`
	ID     int64  `json:"id"`
	DataID int    `json:"data_id"`
	Iter   int    `json:"iter"`
	Q      int    `json:"q"`      // latent dimension
	D      int    `json:"d"`      // pixels per image
	Height int    `json:"height"` // image rows
	Width  int    `json:"width"`  // image columns
	G      int    `json:"g"`      // latent points
	Points Ref    `json:"points"` // g × q, as requested
	Mean   Ref    `json:"mean"`   // g × d grey levels: the decoder's predictive mean
	Var    Ref    `json:"var"`    // g × d grey levels²: its predictive variance (q(u), conditional, noise)
	Frames []int  `json:"frames"`
	// Original (f × d) are the frames; ReconMean and ReconVar (f × d) the
	// last layer's message for each frame (the model's reconstruction).
	Original  Ref       `json:"original"`
	ReconMean Ref       `json:"recon_mean"`
	ReconVar  Ref       `json:"recon_var"`
	MS        num       `json:"ms"` // time to decode, milliseconds
	Sections  []section `json:"sections"`
}

func (h *decodeHeader) setSections(s []section) { h.Sections = s }

// CheckDecode checks a decode command against a model with latent
// dimension q and n frames: points a whole number of q-vectors, at most
// MaxDecodePoints of them, frames in 0…n−1, at most MaxDecodeFrames, and
// something to decode. Its errors name the field.
func CheckDecode(c Command, q, n int) error {
	if q < 1 {
		return errorf("decode: the model has no latent layer")
	}
	if len(c.Points)%q != 0 {
		return errorf("decode: points has %d values, want a multiple of the latent dimension %d (x₁, y₁, x₂, y₂, …)", len(c.Points), q)
	}
	if g := len(c.Points) / q; g > MaxDecodePoints {
		return errorf("decode: %d points, at most %d", g, MaxDecodePoints)
	}
	for k, v := range c.Points {
		if math.IsNaN(v) || math.Abs(v) > MaxCoordinate {
			return errorf("decode: points[%d] = %v out of range [-%d, %d]", k, v, MaxCoordinate, MaxCoordinate)
		}
	}
	if len(c.Frames) > MaxDecodeFrames {
		return errorf("decode: %d frames, at most %d", len(c.Frames), MaxDecodeFrames)
	}
	for k, i := range c.Frames {
		if i < 0 || i >= n {
			return errorf("decode: frames[%d] = %d out of range 0…%d", k, i, n-1)
		}
	}
	if len(c.Points) == 0 && len(c.Frames) == 0 {
		return errorf("decode: give \"points\" (latent x, y pairs) and/or \"frames\" (frame indices)")
	}
	return nil
}

// queueDecode hands a decode command to the decode goroutine, or answers
// it with an error when too many wait. Called by the reader.
func (s *session) queueDecode(c Command) {
	select {
	case s.decodes <- c:
	default:
		s.reply(reply{Type: "error", ID: c.ID, Op: c.Op, Error: errorf("decode: %d requests are waiting; send the next when an answer arrives", decodeQueue).Error()})
	}
}

// decoder is the decode goroutine's cache: the faces.Decoder of the last
// model it decoded with.
type decoder struct {
	model *engine.Model
	dec   *faces.Decoder
	ev    engine.Evaluator
}

// decodeLoop serves decode commands until the session ends.
func (s *session) decodeLoop() {
	defer s.recoverPanic("decode")
	var d decoder
	d.ev.Workers = 1
	for {
		select {
		case <-s.ctx.Done():
			return
		case c := <-s.decodes:
			b, err := s.decode(&d, c)
			if err != nil {
				s.errorReply(c, err)
				continue
			}
			s.send(outMsg{binary: true, data: b})
		}
	}
}

// decode answers one decode command from the latest published model.
func (s *session) decode(d *decoder, c Command) ([]byte, error) {
	st := s.figure
	st.mu.Lock()
	m, dt, iter := st.model, st.data, st.iter
	st.mu.Unlock()
	return d.decode(c, m, dt, iter)
}

// decode answers one decode command from model m (published, immutable)
// on data dt at iteration iter; a session's decode goroutine and a
// follower's reader (follow.go) both answer with it.
func (d *decoder) decode(c Command, m *engine.Model, dt *data, iter int) ([]byte, error) {
	t0 := time.Now()
	if m == nil || dt == nil {
		return nil, errorf("decode: the session has no model yet")
	}
	if dt.frey == nil {
		return nil, errorf("decode: only the Frey faces view decodes images (data set %q)", dt.ds.Name)
	}
	if len(m.Layers) < 2 {
		return nil, errorf("decode: the model has no hidden layer to decode from")
	}
	last := m.Layers[len(m.Layers)-1]
	_, q, dd := last.Dims()
	n, _ := dt.x.Dims()
	if err := CheckDecode(c, q, n); err != nil {
		return nil, err
	}
	if d.model != m {
		dec, err := faces.NewDecoder(m, dt.ny)
		if err != nil {
			return nil, errorf("decode: %w", err)
		}
		d.model, d.dec = m, dec
	}
	g := len(c.Points) / q
	mean, vr := make([]float64, g*dd), make([]float64, g*dd)
	if g > 0 {
		if err := d.dec.Decode(c.Points, mean, vr); err != nil {
			return nil, errorf("decode: %w", err)
		}
	}
	fr := len(c.Frames)
	orig, rm, rv := make([]float64, 0, fr*dd), make([]float64, 0, fr*dd), make([]float64, 0, fr*dd)
	if fr > 0 {
		_, px := dt.x.Dims()
		xs := mat.NewDense(fr, px, nil)
		for r, i := range c.Frames {
			xs.SetRow(r, dt.x.RawRowView(i))
		}
		msgs, err := d.ev.Predict(m, xs)
		if err != nil {
			return nil, errorf("decode: reconstructing frames: %w", err)
		}
		out := msgs[len(msgs)-1]
		for r, i := range c.Frames {
			for j := range dd {
				sc, mu := dt.ny.Scale[j], dt.ny.Mean[j]
				orig = append(orig, dt.y.At(i, j)*sc+mu)
				rm = append(rm, out.Mean.At(r, j)*sc+mu)
				rv = append(rv, out.Var.At(r, j)*sc*sc)
			}
		}
	}
	h := &decodeHeader{V: ProtocolVersion, Type: "decoded", ID: c.ID, DataID: dt.id, Iter: iter, Q: q, D: dd,
		Height: dt.frey.height(), Width: dt.frey.width(), G: g, Frames: c.Frames}
	if h.Frames == nil {
		h.Frames = []int{}
	}
	var e encoder
	h.Points, h.Mean, h.Var = e.arr(c.Points), e.arr(mean), e.arr(vr)
	h.Original, h.ReconMean, h.ReconVar = e.arr(orig), e.arr(rm), e.arr(rv)
	h.MS = num(float64(time.Since(t0).Microseconds()) / 1000)
	b, err := e.finish(h)
	if err != nil {
		return nil, fmt.Errorf("stream: decode: %w", err)
	}
	return b, nil
}
