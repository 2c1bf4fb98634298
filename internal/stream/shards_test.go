package stream

import (
	"math"
	"sync/atomic"
	"testing"
	"time"

	"dgpviz/internal/engine"
	"dgpviz/internal/stream/streamtest"
	"dgpviz/internal/train"
	"dgpviz/internal/view"
)

// countingEvaluator is a session's evaluator of all the data elsewhere,
// as viz serve -workers-nats gives one (dgpviz/internal/shards): here an
// engine.Evaluator that counts its evaluations and, like the shards' sum,
// returns no per-datum outputs.
type countingEvaluator struct {
	calls atomic.Int64
}

func (c *countingEvaluator) EvaluateAll(m *engine.Model, opt engine.Options) (*engine.Result, *engine.Gradient, error) {
	c.calls.Add(1)
	var ev engine.Evaluator
	res, g, err := ev.EvaluateAll(m, opt)
	if res != nil {
		for i := range res.Layers {
			res.Layers[i].CompressionPerDatum, res.Layers[i].PropagationPerDatum = nil, nil
		}
		res.Messages = make([]engine.Message, len(res.Messages))
	}
	return res, g, err
}

// TestSessionOnShards: a session's fit evaluates all the data with the
// evaluator Options.Shards gives for its data (a fit on worker
// processes), and its frames still show the bound, evaluated here for
// the per-datum views the shards' sum does not carry.
func TestSessionOnShards(t *testing.T) {
	var ce countingEvaluator
	var asked atomic.Int64
	e := newEnv(t, func(o *Options) {
		o.Shards = func(d *view.Data) train.Evaluator {
			asked.Add(1)
			return &ce
		}
	})
	c := e.Dial(t, "")
	m := c.Until("a frame of iteration 3", 60*time.Second, func(m streamtest.Msg) bool {
		return m.Type() == "frame" && streamtest.Num(streamtest.Get(m.Frame, "iter")) >= 3
	})
	if asked.Load() == 0 || ce.calls.Load() == 0 {
		t.Fatalf("the session's data were given %d evaluators, which evaluated %d times", asked.Load(), ce.calls.Load())
	}
	if b := streamtest.Num(streamtest.Get(m.Frame, "bound")); math.IsNaN(b) || b == 0 {
		t.Errorf("the frame's bound is %v", b)
	}
}
