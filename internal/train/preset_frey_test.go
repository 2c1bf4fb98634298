package train

import (
	"context"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// freyQuality is what a held-out reconstruction of Frey faces measured.
type freyQuality struct {
	dgp, pca2, meanFace float64 // held-out RMSE in grey levels
	bound               float64
	iters               int
	elapsed             time.Duration
	// consecutive and random are the median latent distances of
	// consecutive training frames and of random pairs of training frames;
	// rank and pcaRank the median rank of a frame's successor among its
	// neighbours in the deep GP's latent and in PCA-2's scores (latentOrder).
	consecutive, random float64
	rank, pcaRank       float64
}

// freyHeldOut fits the Frey preset on the frames whose index is not a
// multiple of 10 (90 %) for at most iters iterations per restart and
// reconstructs the others, against 2-component PCA and the mean face
// fitted on the same frames.
func freyHeldOut(t *testing.T, ds *dataset.Dataset, iters int) freyQuality {
	t.Helper()
	ytr, yte, train := freySplit(ds)
	norm := dataset.FitNormalizer(ytr)
	xn := norm.Apply(ytr)
	p := FreyPreset(1)
	start := time.Now()
	m, _, err := p.Start(context.Background(), xn, mat.DenseCopyOf(xn), TrainerConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, rep, err := Fit(context.Background(), m.Clone(), p.Trainer(TrainerConfig{}), FitOptions{MaxIters: iters})
	if err != nil {
		t.Fatal(err)
	}
	var q freyQuality
	q.elapsed = time.Since(start)
	q.bound, q.iters = rep.Bound, rep.Iters
	var e engine.Evaluator
	msgs, err := e.Predict(m, norm.Apply(yte))
	if err != nil {
		t.Fatal(err)
	}
	rec := norm.UndoMean(msgs[len(msgs)-1].Mean)
	q.dgp = rmse(rec, yte)

	q.pca2, q.meanFace, q.pcaRank = freyBaselines(t, ytr, yte, train)

	// Latent ordering: training frames' latent means.
	lat := msgs[0].Mean
	if tr, err := e.PredictLayers(m, xn, 1); err == nil {
		lat = tr[0].Mean
	} else {
		t.Fatal(err)
	}
	dist := func(a, b int) float64 {
		return math.Hypot(lat.At(a, 0)-lat.At(b, 0), lat.At(a, 1)-lat.At(b, 1))
	}
	var rnd []float64
	for r := 1; r < len(train); r++ {
		rnd = append(rnd, dist(r, (r*7919+13)%len(train))) // a fixed pseudo-random partner
	}
	q.random = median(rnd)
	q.consecutive, q.rank = latentOrder(lat, train)
	return q
}

// freyBaselines fits the baselines on the training frames ytr (frame
// numbers train) and reconstructs the held-out frames yte: 2-component PCA
// and the mean face (held-out RMSE, grey levels), and PCA-2's scores'
// latent order by time (latentOrder's rank).
func freyBaselines(t testing.TB, ytr, yte *mat.Dense, train []int) (pca2, meanFace, pcaRank float64) {
	t.Helper()
	n, d := ytr.Dims()
	nt, _ := yte.Dims()
	mean := make([]float64, d)
	for r := range n {
		for j := range d {
			mean[j] += ytr.At(r, j) / float64(n)
		}
	}
	centred := mat.NewDense(n, d, nil)
	for r := range n {
		for j := range d {
			centred.Set(r, j, ytr.At(r, j)-mean[j])
		}
	}
	var svd mat.SVD
	if !svd.Factorize(centred, mat.SVDThin) {
		t.Fatal("SVD failed")
	}
	var v mat.Dense
	svd.VTo(&v)
	v2 := v.Slice(0, d, 0, 2)
	ct := mat.NewDense(nt, d, nil)
	mf := mat.NewDense(nt, d, nil)
	for r := range nt {
		for j := range d {
			ct.Set(r, j, yte.At(r, j)-mean[j])
			mf.Set(r, j, mean[j])
		}
	}
	var proj, back, scores mat.Dense
	proj.Mul(ct, v2)
	back.Mul(&proj, v2.T())
	back.Add(&back, mf)
	scores.Mul(centred, v2)
	_, pcaRank = latentOrder(&scores, train)
	return rmse(&back, yte), rmse(mf, yte), pcaRank
}

func rmse(a, b *mat.Dense) float64 {
	r, c := a.Dims()
	var s float64
	for i := range r {
		for j := range c {
			d := a.At(i, j) - b.At(i, j)
			s += d * d
		}
	}
	return math.Sqrt(s / float64(r*c))
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestFreyHeldOutFixture fits the preset on the generated Frey fixture (60
// synthetic frames varying along two smooth directions) and checks that the
// 2-D deep GP reconstructs held-out frames better than the baselines,
// 2-component PCA and the mean face, and that its latent is ordered by
// time: consecutive frames land closer than random pairs, and a frame's
// successor among its nearest neighbours.
func TestFreyHeldOutFixture(t *testing.T) {
	if testing.Short() {
		t.Skip("fits the Frey autoencoder on the fixture (tens of seconds under -race): not in the short tier")
	}
	ds, err := dataset.LoadFrey("../dataset/testdata/frey_small.mat")
	if err != nil {
		t.Fatal(err)
	}
	q := freyHeldOut(t, ds, 30)
	t.Logf("held-out RMSE: deep GP %.2f, PCA-2 %.2f, mean face %.2f grey levels; bound %.6g after %d iterations in %v; latent distance consecutive %.3g vs random %.3g; successor's rank deep GP %.3f, PCA-2 %.3f",
		q.dgp, q.pca2, q.meanFace, q.bound, q.iters, q.elapsed, q.consecutive, q.random, q.rank, q.pcaRank)
	if !(q.dgp < q.pca2 && q.pca2 < q.meanFace) {
		t.Errorf("held-out RMSE: deep GP %.3f, PCA-2 %.3f, mean face %.3f: want deep GP < PCA-2 < mean face", q.dgp, q.pca2, q.meanFace)
	}
	if !(q.consecutive < q.random) {
		t.Errorf("median latent distance of consecutive frames %.3g, of random pairs %.3g: want consecutive < random", q.consecutive, q.random)
	}
	// Chance is 0.5; the fixture's frames vary smoothly, so a latent
	// ordered by time has its successors among the nearest.
	if !(q.rank < 0.1) {
		t.Errorf("the successor's median rank among a frame's neighbours is %.3f: want < 0.1 (chance: 0.5)", q.rank)
	}
}

// TestFreyHeldOutReal measures the same on the paper's 1965 frames; it takes
// minutes, so it runs only with DGPVIZ_FREY_FULL=1 (the numbers in README).
func TestFreyHeldOutReal(t *testing.T) {
	if os.Getenv("DGPVIZ_FREY_FULL") == "" {
		t.Skip("set DGPVIZ_FREY_FULL=1 to fit the real Frey faces (minutes)")
	}
	path := "../../../shared/data/frey_faces/frey_rawface.mat"
	if _, err := os.Stat(path); err != nil {
		t.Skipf("shared data not found at %s: skipping", path)
	}
	ds, err := dataset.LoadFrey(path)
	if err != nil {
		t.Fatal(err)
	}
	q := freyHeldOut(t, ds, DefaultMaxIters)
	t.Logf("held-out RMSE: deep GP %.2f, PCA-2 %.2f, mean face %.2f grey levels; bound %.6g after %d iterations in %v; latent distance consecutive %.3g vs random %.3g; successor's rank deep GP %.3f, PCA-2 %.3f",
		q.dgp, q.pca2, q.meanFace, q.bound, q.iters, q.elapsed, q.consecutive, q.random, q.rank, q.pcaRank)
	if !(q.dgp < q.pca2) {
		t.Errorf("held-out RMSE: deep GP %.3f, PCA-2 %.3f: want deep GP < PCA-2", q.dgp, q.pca2)
	}
}
