package explorer

import (
	"context"
	"fmt"
	"testing"

	"dgpviz/internal/view"
	"dgpviz/internal/wire"
)

// BenchmarkSampledFrame is a running fit's frame of data shown by a
// sample, at 10⁴ and 10⁵ rows: its cost and its bytes are the sample's,
// whatever the rows (the pass over every row runs in the background and
// is measured by BenchmarkPassAll).
func BenchmarkSampledFrame(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			d := view.NewData(1, walkData(n*9/10, n/10, 30))
			v := New(view.NewEnv(context.Background(), 10))
			fr := v.NewFramer().(*framer)
			s := snapshot(b, d, true)
			s.Running = true
			var size int
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				var e wire.Encoder
				layers, sec := fr.Frame(&e, s)
				msg, _ := e.Finish(&testHeader{Layers: layers, View: sec})
				size = len(msg)
			}
			fr.all.Wait()
			b.ReportMetric(float64(size), "frame-bytes")
		})
	}
}

// BenchmarkPassAll is the pass over every row (density, scores, test
// error) at 10⁴ and 10⁵ rows: linear in the rows.
func BenchmarkPassAll(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			d := view.NewData(1, walkData(n*9/10, n/10, 30))
			v := New(view.NewEnv(context.Background(), 10))
			f := v.factsOf(d)
			s := snapshot(b, d, true)
			b.ReportAllocs()
			for b.Loop() {
				passAll(s, f)
			}
		})
	}
}
