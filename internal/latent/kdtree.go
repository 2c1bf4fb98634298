package latent

import (
	"math"
)

// kdTree finds the rows of a low-dimensional point set (the ground truth's
// 2 or 3 coordinates) within a radius of a point: the revisits of a row
// without comparing it with every other. Memory: the points' coordinates
// once more and one int32 per row.
type kdTree struct {
	p    int       // coordinates per point
	xs   []float64 // the points in tree order, p per point
	rows []int32   // the row of each point in tree order
}

// kdLeaf is the most points a subtree scans without splitting.
const kdLeaf = 8

// newKDTree indexes the rows of a (N × P) whose coordinates are all finite.
func newKDTree(a interface {
	Dims() (int, int)
	At(i, j int) float64
}) *kdTree {
	n, p := a.Dims()
	t := &kdTree{p: p}
	for i := range n {
		finite := true
		for k := range p {
			if v := a.At(i, k); math.IsNaN(v) || math.IsInf(v, 0) {
				finite = false
			}
		}
		if !finite {
			continue
		}
		t.rows = append(t.rows, int32(i))
		for k := range p {
			t.xs = append(t.xs, a.At(i, k))
		}
	}
	t.build(0, len(t.rows), 0)
	return t
}

// build arranges points [lo, hi) so that the median in dimension
// depth mod p sits at the middle, the smaller ones before it and the larger
// after, and recurses into both halves.
func (t *kdTree) build(lo, hi, depth int) {
	if hi-lo <= kdLeaf {
		return
	}
	mid, k := (lo+hi)/2, depth%t.p
	t.selectNth(lo, hi, mid, k)
	t.build(lo, mid, depth+1)
	t.build(mid+1, hi, depth+1)
}

// selectNth partially orders points [lo, hi) by coordinate k so that the
// point at nth has every smaller one before it and every larger after
// (Hoare's selection, expected linear time).
func (t *kdTree) selectNth(lo, hi, nth, k int) {
	hi--
	for lo < hi {
		pivot := t.xs[((lo+hi)/2)*t.p+k]
		i, j := lo, hi
		for i <= j {
			for t.xs[i*t.p+k] < pivot {
				i++
			}
			for t.xs[j*t.p+k] > pivot {
				j--
			}
			if i <= j {
				t.swap(i, j)
				i++
				j--
			}
		}
		switch {
		case nth <= j:
			hi = j
		case nth >= i:
			lo = i
		default:
			return
		}
	}
}

func (t *kdTree) swap(i, j int) {
	t.rows[i], t.rows[j] = t.rows[j], t.rows[i]
	for k := range t.p {
		t.xs[i*t.p+k], t.xs[j*t.p+k] = t.xs[j*t.p+k], t.xs[i*t.p+k]
	}
}

// within calls f with every row whose point lies within r of c (the same
// Euclidean distance as distance, compared as distance(·) ≤ r), in a fixed
// order.
func (t *kdTree) within(c []float64, r float64, f func(row int)) {
	t.search(0, len(t.rows), 0, c, r, f)
}

func (t *kdTree) search(lo, hi, depth int, c []float64, r float64, f func(int)) {
	if hi-lo <= kdLeaf {
		for i := lo; i < hi; i++ {
			t.visit(i, c, r, f)
		}
		return
	}
	mid, k := (lo+hi)/2, depth%t.p
	// A coordinate's difference never exceeds the distance, so a half
	// beyond r of the splitting plane holds no point within r.
	d := c[k] - t.xs[mid*t.p+k]
	if d <= r {
		t.search(lo, mid, depth+1, c, r, f)
	}
	t.visit(mid, c, r, f)
	if -d <= r {
		t.search(mid+1, hi, depth+1, c, r, f)
	}
}

func (t *kdTree) visit(i int, c []float64, r float64, f func(int)) {
	var s float64
	for k := range t.p {
		d := c[k] - t.xs[i*t.p+k]
		s += d * d
	}
	if math.Sqrt(s) <= r {
		f(int(t.rows[i]))
	}
}
