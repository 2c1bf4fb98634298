package engine

import (
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// chunkSize is the largest number of data per parallel work item. Chunks
// are reduced in order, so results do not depend on the number of workers.
const chunkSize = 32

// chunkMultiple: the number of chunks, when more than one, is a multiple
// of it, so that two or four workers get equal shares.
const chunkMultiple = 4

// maxChunks caps the number of chunks: each has its own accumulators (the
// Ψ2 loop's are 41 KB for M=50), which are cleared and reduced serially,
// so for large N longer chunks are cheaper. A multiple of chunkMultiple.
const maxChunks = 16

func (e *Evaluator) workers() int {
	if e.Workers > 0 {
		return e.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// parallel calls fn(chunk, lo, hi) for every chunk of [0, n) on up to
// Workers goroutines, and every side task: independent work that fills
// the workers' idle time in the region (such as the next layer's
// preparation). Side tasks go first, the largest first in the caller's
// order, so that none starts last.
func (e *Evaluator) parallel(n int, fn func(chunk, lo, hi int), side ...func()) {
	chunks := numChunks(n)
	e.parallelFor(len(side)+chunks, func(c int) {
		if c < len(side) {
			side[c]()
			return
		}
		c -= len(side)
		fn(c, c*n/chunks, (c+1)*n/chunks)
	})
}

// parallelFor calls fn(0), …, fn(tasks−1) on up to Workers goroutines.
// The tasks must be independent.
func (e *Evaluator) parallelFor(tasks int, fn func(task int)) {
	workers := min(e.workers(), tasks)
	if workers <= 1 {
		serialFor(tasks, fn)
		return
	}
	if e.team != nil {
		if !e.team.run(tasks, fn) {
			serialFor(tasks, fn)
		}
		return
	}
	var next atomic.Int64
	work := func() {
		for {
			t := int(next.Add(1) - 1)
			if t >= tasks {
				return
			}
			fn(t)
		}
	}
	// The caller is one of the workers: it starts at once, while the
	// others may wait for a parked thread to wake up.
	var wg sync.WaitGroup
	for k := 1; k < workers; k++ {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// serialFor calls fn(0), …, fn(tasks−1) in order.
func serialFor(tasks int, fn func(task int)) {
	for t := 0; t < tasks; t++ {
		fn(t)
	}
}

// minParallelWork is the number of multiply-adds below which starting
// goroutines costs more than it saves.
const minParallelWork = 1 << 15

// mmRows is mm, with a not transposed, split by blocks of rows of c
// across the workers when the product is large. The blocks do not depend
// on the number of workers.
func (e *Evaluator) mmRows(c []float64, m, n, k int, a, b []float64, tb bool, alpha, beta float64) {
	if m*n*k < 2*minParallelWork {
		mm(c, m, n, k, a, false, b, tb, alpha, beta)
		return
	}
	e.parallelFor((m+tnRows-1)/tnRows, func(t int) {
		lo, hi := t*tnRows, min(m, (t+1)*tnRows)
		mm(c[lo*n:hi*n], hi-lo, n, k, a[lo*k:hi*k], false, b, tb, alpha, beta)
	})
}

// reduce adds every accumulator into accs[0], in the order of accs for
// every element (so the sums do not depend on the number of workers), in
// parallel over segments of the buffers; with the kernel's merge where it
// has one (psi2Merger).
func (e *Evaluator) reduce(accs []*psi2Acc, k psi2Kernel) {
	if len(accs) < 2 {
		return
	}
	n := len(accs[0].buf)
	segment := 1024
	mg, merges := k.(psi2Merger)
	if merges {
		bl := mg.blockLen()
		segment = max(1, segment/bl) * bl
	}
	segs := (n + segment - 1) / segment
	run := e.parallelFor
	if n*(len(accs)-1) < minParallelWork {
		run = serialFor
	}
	run(segs, func(s int) {
		lo, hi := s*segment, min(n, (s+1)*segment)
		dst := accs[0].buf[lo:hi]
		for _, a := range accs[1:] {
			if merges {
				mg.merge(dst, a.buf[lo:hi], lo)
			} else {
				addTo(dst, a.buf[lo:hi])
			}
		}
	})
}

func numChunks(n int) int {
	c := (n + chunkSize - 1) / chunkSize
	if c > 1 {
		c = (c + chunkMultiple - 1) / chunkMultiple * chunkMultiple
	}
	return min(c, maxChunks)
}

// tnProduct is c (m×cols) = alpha·aᵀ·b + beta·c for a (k×m) and b
// (k×cols), a sum over the k data.
type tnProduct struct {
	c           []float64
	cols        int
	a, b        []float64
	alpha, beta float64
	// sym: a = b and beta = 0, so c is symmetric; only blocks on and
	// above the diagonal are computed, and mirrored.
	sym bool
}

// tnRows is the number of rows of c per task of productsTN.
const tnRows = 8

// tnWideCols, tnCols and tnK: a product of productsTN with at least
// tnWideCols columns is split into tasks of tnCols columns (a multiple of
// the kernel's 8), which sum over the data in blocks of tnK: a block of b
// is 128×64 values, 64 KB.
const (
	tnWideCols = 256
	tnCols     = 64
	tnK        = 128
)

// productsTN computes products that sum over the data, split by blocks of
// rows of c: each element is summed by one task in the same order for any
// number of workers.
//
// A wide product (cols ≥ tnWideCols, with the AVX2 kernel: the output
// layer's Ψ1ᵀ·G, M × 560 over the N data) is split by blocks of columns
// instead, each task doing all M rows over the data in blocks of tnK: its
// block of b, read once from memory, is in the cache for every row of c,
// where blocks of rows read the N×cols b once per 4 rows of c.
func (e *Evaluator) productsTN(m, k int, ps ...tnProduct) {
	blocks := (m + tnRows - 1) / tnRows
	work := 0
	type task struct{ p, lo, hi int } // rows lo…hi−1, or columns for a wide product
	var tasks []task
	var aT [][]float64
	for i, p := range ps {
		work += m * k * p.cols
		if useSIMD && !p.sym && p.cols >= tnWideCols {
			if aT == nil {
				aT = make([][]float64, len(ps))
			}
			buf := getScratch(m * k)
			defer putScratch(buf)
			transpose(*buf, p.a, k, m, m)
			aT[i] = *buf
			for j := 0; j < p.cols; j += tnCols {
				tasks = append(tasks, task{i, j, min(p.cols, j+tnCols)})
			}
			continue
		}
		for b := range blocks {
			tasks = append(tasks, task{i, b * tnRows, min(m, (b+1)*tnRows)})
		}
	}
	run := e.parallelFor
	if work < minParallelWork {
		run = serialFor
	}
	run(len(tasks), func(t int) {
		tk := tasks[t]
		p := ps[tk.p]
		if aT != nil && aT[tk.p] != nil {
			j0, j1 := tk.lo, tk.hi
			for i := 0; i < m; i++ {
				scaleBy(p.c[i*p.cols+j0:i*p.cols+j1], p.beta)
			}
			for l0 := 0; l0 < k; l0 += tnK {
				l1 := min(k, l0+tnK)
				gemmNN(m, j1-j0, l1-l0, p.alpha, aT[tk.p][l0:], k, p.b[l0*p.cols+j0:], p.cols, p.c[j0:], p.cols)
			}
			return
		}
		lo, hi := tk.lo, tk.hi
		j := 0
		if p.sym {
			j = lo
		}
		if !useSIMD {
			blas64.Implementation().Dgemm(blas.Trans, blas.NoTrans, hi-lo, p.cols-j, k, p.alpha, p.a[lo:], m, p.b[j:], p.cols, p.beta, p.c[lo*p.cols+j:], p.cols)
			return
		}
		for i := lo; i < hi; i++ {
			scaleBy(p.c[i*p.cols+j:(i+1)*p.cols], p.beta)
		}
		buf := getScratch((hi - lo) * k)
		transpose(*buf, p.a[lo:], k, hi-lo, m)
		gemmNN(hi-lo, p.cols-j, k, p.alpha, *buf, k, p.b[j:], p.cols, p.c[lo*p.cols+j:], p.cols)
		putScratch(buf)
	})
	for _, p := range ps {
		if !p.sym {
			continue
		}
		for i := tnRows; i < m; i++ {
			for j := 0; j < i/tnRows*tnRows; j++ {
				p.c[i*m+j] = p.c[j*m+i]
			}
		}
	}
}
