package explorer

import (
	"math/rand/v2"
)

// SampleRows is the most rows a setup or a frame carries. A frame goes
// out up to 30 times a second; 4,096 rows of two 3-D hidden layers are
// 100 KB of 16-bit values and a few milliseconds of Canvas 2D, where a
// million rows would be 25 MB. Data of more rows are shown by a sample of
// this many (Sample) and the density of all rows (Density).
const SampleRows = 4096

// sampleSeed seeds every sample: the same data show the same rows in
// every session and after every reload.
const sampleSeed = 35

// Sample is a stable level-of-detail sample of a data set's rows: the
// same rows in every frame. Each split is sampled on its own in
// proportion to its size, so held-out rows are represented (at least one
// when there are any); within a split the rows are stratified, one row
// drawn at random from each of k equal runs of rows, so the sample covers
// the input's range evenly and keeps the rows' order.
type Sample struct {
	NTrain, NTest int   // rows of each split in the data
	Train         []int // training rows shown, increasing
	Test          []int // held-out rows shown (counted within the test split), increasing
}

// NewSample returns the sample of at most k rows (k ≥ 2) of data with
// nTrain training and nTest held-out rows, drawn with seed: every row
// when there are no more than k.
func NewSample(nTrain, nTest, k int, seed uint64) *Sample {
	s := &Sample{NTrain: nTrain, NTest: nTest}
	kTrain, kTest := nTrain, nTest
	if nTrain+nTest > k {
		kTest = int(int64(k) * int64(nTest) / int64(nTrain+nTest))
		if nTest > 0 {
			kTest = max(kTest, 1)
		}
		kTrain = k - kTest
	}
	s.Train = stratified(nTrain, kTrain, rand.New(rand.NewPCG(seed, 1)))
	s.Test = stratified(nTest, kTest, rand.New(rand.NewPCG(seed, 2)))
	return s
}

// stratified draws one row at random from each of k equal runs of n rows
// (every row when k ≥ n).
func stratified(n, k int, r *rand.Rand) []int {
	k = min(k, n)
	out := make([]int, k)
	for j := range out {
		lo, hi := int(int64(j)*int64(n)/int64(k)), int(int64(j+1)*int64(n)/int64(k))
		out[j] = lo
		if hi-lo > 1 {
			out[j] += r.IntN(hi - lo)
		}
	}
	return out
}

// All reports whether the sample is every row.
func (s *Sample) All() bool { return len(s.Train) == s.NTrain && len(s.Test) == s.NTest }

// pick returns v's values at rows idx of width w (v: rows × w, row by
// row).
func pick(v []float64, w int, idx []int) []float64 {
	out := make([]float64, 0, len(idx)*w)
	for _, i := range idx {
		out = append(out, v[i*w:(i+1)*w]...)
	}
	return out
}
