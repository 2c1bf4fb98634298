package shards

import (
	"fmt"
	"testing"

	"dgpviz/internal/engine"
	"dgpviz/internal/train"
)

// BenchmarkOverhead: an evaluation of the bound and gradient (with the
// optimal final q(u): two rounds) of the walk's robot-shaped model
// (1 → 3 → 3 → 30, 15 inducing points) on 200 rows, in this process (chunks of 60 rows, as the shards') and
// through NATS on loopback with one worker in this process: the
// difference is the transport's overhead per evaluation. It reports the
// bytes that travel per evaluation.
func BenchmarkOverhead(b *testing.B) {
	c := newCluster(b, 240)
	m, err := train.Initialize(c.x, c.y, train.InitConfig{Hidden: []int{3, 3}, Inducing: 15, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	opt := engine.Options{Gradient: true, NoOutputMessage: true, OptimalFinalQ: true}
	b.Run("local", func(b *testing.B) {
		ev := engine.Evaluator{Workers: 1} // as the worker's (Engine: 1)
		for b.Loop() {
			if _, _, err := ev.EvaluateChunked(m, opt, 60); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, shards := range []int{1, 4} {
		b.Run(fmt.Sprintf("nats-%dshards", shards), func(b *testing.B) {
			w := c.startWorker("bench")
			defer w.kill()
			co := c.coordinate(Options{Shards: shards, ChunkRows: 60})
			defer co.Close()
			waitWorkers(b, co, 1)
			if _, _, err := co.EvaluateAll(m, opt); err != nil {
				b.Fatal(err)
			}
			in0, out0 := co.nc.Stats().OutBytes, co.nc.Stats().InBytes
			for b.Loop() {
				if _, _, err := co.EvaluateAll(m, opt); err != nil {
					b.Fatal(err)
				}
			}
			st := co.nc.Stats()
			b.ReportMetric(float64(st.OutBytes-in0)/float64(b.N), "B-sent/eval")
			b.ReportMetric(float64(st.InBytes-out0)/float64(b.N), "B-received/eval")
		})
	}
}
