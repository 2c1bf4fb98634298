package shards

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"dgpviz/internal/engine"
	"dgpviz/internal/relay"

	"github.com/nats-io/nats.go"
	"gonum.org/v1/gonum/mat"
)

// HelloEvery is how often a worker announces itself; a coordinator
// counts on a worker heard from within HelloTimeout.
const (
	HelloEvery   = 250 * time.Millisecond
	HelloTimeout = 3 * time.Second
)

// A Worker serves the shards of one fit's data: it reads the data the
// coordinator describes (Data) and evaluates the ranges of rows it is
// asked for, one at a time, with all its engine workers.
type Worker struct {
	// Fit names the fit (relay.CheckFitName): its subjects are the
	// worker's.
	Fit string
	// ID names the worker among the fit's (default: random).
	ID string
	// Engine is the goroutines of each evaluation (0: GOMAXPROCS).
	Engine int
	Logger *slog.Logger

	mu    sync.Mutex
	data  Data
	x, y  *mat.Dense
	model *engine.Model
	ev    engine.Evaluator
	shape []layerShape
}

// NewWorkerID returns a random worker name.
func NewWorkerID() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Serve answers the fit's requests on nc and announces the worker until
// ctx is done.
func (w *Worker) Serve(ctx context.Context, nc *nats.Conn) error {
	if err := relay.CheckFitName(w.Fit); err != nil {
		return err
	}
	if w.ID == "" {
		w.ID = NewWorkerID()
	}
	w.ev.Workers = w.Engine
	subject := relay.FitSubject(w.Fit)
	sub, err := nc.Subscribe(subject+".work."+w.ID, func(m *nats.Msg) {
		if m.Reply == "" {
			return
		}
		m.Respond(w.answer(m.Data))
	})
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	// A worker serves one request at a time: a shard's evaluation uses
	// every core. Requests wait in NATS's buffer, which must hold a few.
	sub.SetPendingLimits(1024, 64<<20)
	hello := time.NewTicker(HelloEvery)
	defer hello.Stop()
	for {
		if err := nc.Publish(subject+".hello", []byte(w.ID)); err != nil && !errors.Is(err, nats.ErrConnectionReconnecting) {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-hello.C:
		}
	}
}

func (w *Worker) log() *slog.Logger {
	if w.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Logger
}

// answer decodes a request, evaluates it and encodes the reply; an error
// travels in the reply, never as a panic.
func (w *Worker) answer(b []byte) []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(b) >= 4 && string(b[:4]) == "DGPD" {
		return w.open(b)
	}
	req, err := decodeRequest(b)
	if err != nil {
		w.log().Warn("a request refused", "err", err)
		return (&reply{Worker: w.ID, Err: err}).encode()
	}
	rep := &reply{Seq: req.Seq, Lo: req.Lo, Hi: req.Hi, Worker: w.ID}
	start := time.Now()
	rep.Stats, rep.Part, rep.Err = w.evaluate(req)
	w.log().Debug("evaluated", "rows", fmt.Sprintf("%d-%d", req.Lo+1, req.Hi), "kind", req.Kind, "seconds", time.Since(start).Seconds(), "err", rep.Err)
	return rep.encode()
}

// open reads the data a coordinator describes, unless they are the ones
// the worker holds; its reply is a part-less one, or the error.
func (w *Worker) open(b []byte) []byte {
	d, err := decodeData(b)
	if err == nil && (d.SHA256 != w.data.SHA256 || w.x == nil) {
		w.x, w.y, w.model = nil, nil, nil
		start := time.Now()
		w.x, w.y, err = d.Load()
		if err == nil {
			w.data = d
			w.log().Info("read the fit's data", "spec", d.Spec, "rows", d.Rows, "seconds", time.Since(start).Seconds())
		}
	}
	if err != nil {
		w.log().Warn("the fit's data", "err", err)
		return (&reply{Worker: w.ID, Err: err}).encode()
	}
	return (&reply{Worker: w.ID, Part: &partSums{}}).encode()
}

// evaluate evaluates a decoded request on the worker's data.
func (w *Worker) evaluate(req *request) (*engine.FinalStats, *partSums, error) {
	if w.x == nil || hexSum(req.Data) != w.data.SHA256 {
		return nil, nil, errNoData
	}
	if req.Hi > w.data.Rows {
		return nil, nil, fmt.Errorf("rows %d to %d of data of %d rows", req.Lo+1, req.Hi, w.data.Rows)
	}
	m, err := w.modelOf(req)
	if err != nil {
		return nil, nil, err
	}
	if req.Kind == Stats {
		s, err := w.ev.FinalStats(m, req.Lo, req.Hi, req.Chunk)
		return s, nil, err
	}
	var res *engine.Result
	var g *engine.Gradient
	if req.Kind == BatchPart {
		res, g, err = w.ev.EvaluateBatchPart(m, engine.Options{Rows: req.Rows, Gradient: req.Gradient, NoOutputMessage: true, NoCompensation: req.NoCompensation}, req.Batch, req.KL)
	} else {
		res, g, err = w.ev.EvaluateRange(m, engine.Options{Gradient: req.Gradient, NoOutputMessage: true, NoCompensation: req.NoCompensation}, req.Lo, req.Hi, req.Chunk, req.KL)
	}
	if err != nil {
		return nil, nil, err
	}
	p := &partSums{Likelihood: res.Likelihood}
	for _, t := range res.Layers {
		p.Layers = append(p.Layers, engine.LayerTerms{KL: t.KL, Compression: t.Compression, Propagation: t.Propagation})
	}
	if g != nil {
		p.Gradient = g.Flatten(nil)
	}
	return nil, p, nil
}

// modelOf returns the worker's model at the request's parameters,
// building it anew when its shape changed.
func (w *Worker) modelOf(req *request) (*engine.Model, error) {
	if req.Layers[0].Q != w.data.Inputs || req.Layers[len(req.Layers)-1].D != w.data.Outputs {
		return nil, fmt.Errorf("a model of %d inputs and %d outputs for data of %d and %d", req.Layers[0].Q, req.Layers[len(req.Layers)-1].D, w.data.Inputs, w.data.Outputs)
	}
	if w.model == nil || !sameShape(w.shape, req.Layers) {
		m := &engine.Model{X: w.x, Y: w.y}
		for _, l := range req.Layers {
			k, err := engine.NewKernel(l.Kernel, l.Q)
			if err != nil {
				return nil, err
			}
			layer := &engine.Layer{Kernel: k, NoiseVariance: 1, InducingInputs: mat.NewDense(l.M, l.Q, nil), QMu: mat.NewDense(l.M, l.D, nil)}
			for range l.D {
				layer.QSqrt = append(layer.QSqrt, mat.NewDense(l.M, l.M, nil))
			}
			m.Layers = append(m.Layers, layer)
		}
		w.model, w.shape = m, req.Layers
	}
	if n := len(w.model.Params(nil)); n != len(req.Params) {
		return nil, fmt.Errorf("%d parameters for a model of %d", len(req.Params), n)
	}
	w.model.SetParams(req.Params)
	w.model.Jitter = req.Jitter
	return w.model, nil
}

func sameShape(a, b []layerShape) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func hexSum(b [32]byte) string { return hex.EncodeToString(b[:]) }
