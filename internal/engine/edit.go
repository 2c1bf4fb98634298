package engine

import (
	"dgpviz/internal/linalg"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Edits a person makes to a model (moving, adding and removing inducing
// points, pulling a layer's function) keep q(u) a sensible posterior: the
// inducing outputs at new inducing inputs are the layer's current
// posterior there, so a small edit changes the function a little and the
// bound a little. Keeping q(u) = N(m, S) fixed while z moves would pin
// the old, tightly determined values to new places: the function becomes
// wild and the KL term explodes (a 10 % move cost 10⁴–10⁶ nats on the
// fitted step model).
//
// Every edit returns a new model that shares X and Y with its argument
// (edits never write into the data) and owns deep copies of the layers,
// so the argument stays valid, for example as an undo state.

// ErrEdit wraps the errors of edits whose arguments are out of range.
var ErrEdit = errors.New("cannot edit the model")

// editMinVarRatio and editMaxVarRatio bound the diagonal loading that
// ProjectInducing adds, relative to the mean diagonal of a projected
// covariance, when rounding leaves it not quite positive definite.
const (
	editMinVarRatio = 1e-12
	editMaxVarRatio = 1e-4
)

// ProjectInducing returns a copy of layer l whose inducing inputs are z
// (M′×Q) and whose q(u_d) is the current posterior of the layer's function
// at z:
//
//	mean K_{Z′Z} Kuu⁻¹ m_d,
//	covariance K_{Z′Z′} − K_{Z′Z} Kuu⁻¹ (Kuu − S_d) Kuu⁻¹ K_{ZZ′},
//
// with the jitter on the diagonal of both Kuu and K_{Z′Z′}. A row of z equal
// to a row of Z (bit for bit; each old row claimed once) is the same
// inducing variable, so its covariance with the old one includes the jitter:
// points that stay where they are keep exactly their q(u) marginal, and the
// Cholesky factors of the leading unchanged points are copied, not
// recomputed. Moving back to Z is therefore the identity, removing a point
// is marginalisation, and adding a point is the exact joint projection.
//
// The error wraps ErrNotPositiveDefinite when Kuu cannot be factorised, or
// when a projected covariance stays indefinite after diagonal loading of
// up to editMaxVarRatio of its mean variance.
func ProjectInducing(l *Layer, jitter float64, z *mat.Dense) (*Layer, error) {
	return project(l, jitter, z, nil)
}

// project is ProjectInducing where new point i may carry the jitter of
// old point origin[i] (origin nil or −1: none). The jitter is white noise
// on the inducing variables, u = f(Z) + ε; a point moved from z_j to z′
// keeps the share ρ = corr(f(z′), f(z_j)) of its old noise, which is a
// valid joint prior (the noise correlation matrix [[I, ρe_j],[ρe_jᵀ, 1]]
// is positive semi-definite for |ρ| ≤ 1). Without it a move by a hair
// would replace m_j by the function's mean μ(z_j) = m_j − jitter·(Kuu⁻¹m)_j,
// a jump of up to a few nats on fitted models whose Kuu is ill-conditioned;
// with it the projection is continuous in z′ and the identity at z_j.
func project(l *Layer, jitter float64, z *mat.Dense, origin []int) (*Layer, error) {
	m, q, d := l.Dims()
	m2, qz := z.Dims()
	if qz != q {
		return nil, fmt.Errorf("%w: %d input columns, the layer has %d", ErrEdit, qz, q)
	}
	if m2 < 1 || m2 > MaxInducing {
		return nil, fmt.Errorf("%w: %d inducing points, want 1…%d", ErrEdit, m2, MaxInducing)
	}
	if err := CheckFinite(z, "inducing_inputs"); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrEdit, err)
	}
	zOld := linalg.Flatten(nil, l.InducingInputs)
	zNew := linalg.Flatten(nil, z)

	kuu := make([]float64, m*m)
	Cov(l.Kernel, kuu, zOld, zOld)
	for i := 0; i < m; i++ {
		kuu[i*m+i] += jitter
	}
	lk := make([]float64, m*m)
	if !linalg.Cholesky(lk, kuu, m) {
		return nil, fmt.Errorf("%w with jitter %g", ErrNotPositiveDefinite, jitter)
	}

	// match[i] is the old inducing variable that new point i is, or −1.
	match := matchRows(zNew, zOld, m2, m, q)
	// prefix: the leading new points that are the leading old ones in order;
	// their rows of every Cholesky factor are copied.
	prefix := 0
	for prefix < m2 && prefix < m && match[prefix] == prefix {
		prefix++
	}

	// The noise a moved point carries: its origin and correlation ρ, for
	// points that are not an old point and whose origin is not kept.
	from, rho := make([]int, m2), make([]float64, m2)
	used := make([]bool, m)
	for _, j := range match {
		if j >= 0 {
			used[j] = true
		}
	}
	for i := range from {
		from[i] = -1
		if match[i] >= 0 || origin == nil || origin[i] < 0 || origin[i] >= m || used[origin[i]] {
			continue
		}
		o := origin[i]
		zi, zo := zNew[i*q:(i+1)*q], zOld[o*q:(o+1)*q]
		if v := l.Kernel.Eval(zi, zi) * l.Kernel.Eval(zo, zo); v > 0 {
			from[i], rho[i] = o, l.Kernel.Eval(zi, zo)/math.Sqrt(v)
		}
	}

	// W = K_{Z′Z} Kuu⁻¹ (m2×m): the unit row e_j for a point that is old
	// point j, else solved through Kuu's Cholesky factor.
	kx := make([]float64, m2*m)
	Cov(l.Kernel, kx, zNew, zOld)
	for i, o := range from {
		if o >= 0 {
			kx[i*m+o] += jitter * rho[i]
		}
	}
	w := make([]float64, m2*m)
	for i := 0; i < m2; i++ {
		row := w[i*m : (i+1)*m]
		if j := match[i]; j >= 0 {
			row[j] = 1
			continue
		}
		copy(row, kx[i*m:(i+1)*m])
		linalg.CholSolve(lk, m, row)
	}

	// C = K_{Z′Z′} − W K_{ZZ′}: zero wherever either point is an old one
	// (K_{Z′Z′} and W K_{ZZ′} then agree exactly), computed elsewhere.
	c := make([]float64, m2*m2)
	if m2 > 0 {
		kpp := make([]float64, m2*m2)
		Cov(l.Kernel, kpp, zNew, zNew)
		for a := 0; a < m2; a++ {
			if match[a] >= 0 {
				continue
			}
			for b := 0; b <= a; b++ {
				if match[b] >= 0 {
					continue
				}
				v := kpp[a*m2+b] - linalg.Dot(w[a*m:(a+1)*m], kx[b*m:(b+1)*m])
				switch {
				case a == b:
					v += jitter
				case from[a] >= 0 && from[a] == from[b]:
					v += jitter * rho[a] * rho[b]
				}
				c[a*m2+b], c[b*m2+a] = v, v
			}
		}
	}

	out := &Layer{
		Kernel:         l.Kernel.Clone(),
		NoiseVariance:  l.NoiseVariance,
		InducingInputs: mat.NewDense(m2, q, zNew),
		QMu:            mat.NewDense(m2, d, nil),
		QSqrt:          make([]*mat.Dense, d),
	}
	mu := l.QMu.RawMatrix()
	muNew := out.QMu.RawMatrix()
	for i := 0; i < m2; i++ {
		for k := 0; k < d; k++ {
			if j := match[i]; j >= 0 {
				muNew.Data[i*muNew.Stride+k] = mu.Data[j*mu.Stride+k]
				continue
			}
			var s float64
			for j := 0; j < m; j++ {
				s += w[i*m+j] * mu.Data[j*mu.Stride+k]
			}
			muNew.Data[i*muNew.Stride+k] = s
		}
	}

	wl := make([]float64, m2*m)
	cov := make([]float64, m2*m2)
	lNew := make([]float64, m2*m2)
	for k := 0; k < d; k++ {
		lOld := linalg.Flatten(nil, l.QSqrt[k])
		for i := 0; i < m; i++ { // only the lower triangle is the factor
			clear(lOld[i*m+i+1 : (i+1)*m])
		}
		// W L_d: the old row for an old point.
		for i := 0; i < m2; i++ {
			row := wl[i*m : (i+1)*m]
			if j := match[i]; j >= 0 {
				copy(row, lOld[j*m:(j+1)*m])
				continue
			}
			for c := 0; c < m; c++ {
				var s float64
				for r := c; r < m; r++ {
					s += w[i*m+r] * lOld[r*m+c]
				}
				row[c] = s
			}
		}
		// S′ = C + (W L_d)(W L_d)ᵀ, lower triangle.
		for a := 0; a < m2; a++ {
			for b := 0; b <= a; b++ {
				cov[a*m2+b] = c[a*m2+b] + linalg.Dot(wl[a*m:(a+1)*m], wl[b*m:(b+1)*m])
			}
		}
		clear(lNew)
		for i := 0; i < prefix; i++ {
			copy(lNew[i*m2:i*m2+i+1], lOld[i*m:i*m+i+1])
		}
		if err := loadedCholesky(lNew, cov, m2, prefix); err != nil {
			return nil, fmt.Errorf("projecting q(u) of output %d: %w", k+1, err)
		}
		out.QSqrt[k] = mat.NewDense(m2, m2, append([]float64(nil), lNew...))
	}
	return out, nil
}

// matchRows returns, for each of the n2 rows of b, the index of a row of a
// (n rows) equal to it bit for bit, each row of a used at most once, or −1.
func matchRows(b, a []float64, n2, n, q int) []int {
	match := make([]int, n2)
	used := make([]bool, n)
	for i := 0; i < n2; i++ {
		match[i] = -1
		bi := b[i*q : (i+1)*q]
		// The same index first: the common case of an edit in place.
		if i < n && !used[i] && sameRow(bi, a[i*q:(i+1)*q]) {
			match[i], used[i] = i, true
			continue
		}
		for j := 0; j < n; j++ {
			if !used[j] && sameRow(bi, a[j*q:(j+1)*q]) {
				match[i], used[j] = j, true
				break
			}
		}
	}
	return match
}

func sameRow(a, b []float64) bool {
	for k := range a {
		if math.Float64bits(a[k]) != math.Float64bits(b[k]) {
			return false
		}
	}
	return true
}

// loadedCholesky factorises the lower triangle of the symmetric a (m×m)
// into l, whose first p rows are given. When rounding leaves a not quite
// positive definite it retries with a growing multiple of its mean
// diagonal added to the rows after p, up to editMaxVarRatio.
func loadedCholesky(l, a []float64, m, p int) error {
	var mean float64
	for i := 0; i < m; i++ {
		mean += math.Abs(a[i*m+i])
	}
	mean /= float64(m)
	if mean == 0 || math.IsNaN(mean) || math.IsInf(mean, 0) {
		mean = 1
	}
	work := append([]float64(nil), a...)
	for load := 0.0; ; {
		if load > 0 {
			copy(work, a)
			for i := p; i < m; i++ {
				work[i*m+i] += load
			}
		}
		if linalg.CholeskyFrom(l, work, m, p) {
			return nil
		}
		switch {
		case load == 0:
			load = editMinVarRatio * mean
		case load < editMaxVarRatio*mean:
			load *= 100
		default:
			return fmt.Errorf("%w: the projected covariance is not positive definite", ErrNotPositiveDefinite)
		}
	}
}

// MoveInducing returns m with inducing input j of layer li moved to z and
// the layer's q(u) projected to the new inducing inputs (ProjectInducing):
// the function the layer implies stays as it was. The moved point keeps
// its share of the jitter (see project), so the model changes continuously
// with z and not at all when z is the old input.
func MoveInducing(m *Model, li, j int, z []float64) (*Model, error) {
	l, err := editLayer(m, li, j)
	if err != nil {
		return nil, err
	}
	zz := mat.DenseCopyOf(l.InducingInputs)
	if err := setRow(zz, j, z, "z"); err != nil {
		return nil, err
	}
	mz, _, _ := l.Dims()
	origin := make([]int, mz)
	for i := range origin {
		origin[i] = -1
	}
	origin[j] = j
	nl, err := project(l, m.Jitter, zz, origin)
	if err != nil {
		return nil, err
	}
	return withLayer(m, li, nl), nil
}

// MoveInducingKeepU returns m with inducing input j of layer li moved to z
// and q(u) left as it is: the inducing output travels with its input. It
// teaches why MoveInducing projects: nearby points with their old, tightly
// determined values make the function wild and the KL term large.
func MoveInducingKeepU(m *Model, li, j int, z []float64) (*Model, error) {
	l, err := editLayer(m, li, j)
	if err != nil {
		return nil, err
	}
	nl := l.Clone()
	if err := setRow(nl.InducingInputs, j, z, "z"); err != nil {
		return nil, err
	}
	return withLayer(m, li, nl), nil
}

// PullInducing returns m with the function of layer li pulled at inducing
// input j: for each output d the posterior mean moves by the kernel's own
// shape, Δμ_d(x) = k(x, z_j)/k(z_j, z_j)·Δ_d with Δ_d = mu[d] − m_jd, so the
// function at z_j moves by exactly Δ_d and its neighbours follow smoothly
// (in q(u): m_d ← m_d + Kuu[:, j]·Δ_d/k(z_j, z_j); S is unchanged). The
// inducing output m_jd itself ends at mu[d] up to the jitter's share,
// (1 + jitter/k(z_j, z_j)).
func PullInducing(m *Model, li, j int, mu []float64) (*Model, error) {
	l, err := editLayer(m, li, j)
	if err != nil {
		return nil, err
	}
	mz, q, d := l.Dims()
	if len(mu) != d {
		return nil, fmt.Errorf("%w: mu has %d values, layer %d has %d outputs", ErrEdit, len(mu), li+1, d)
	}
	for _, v := range mu {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: mu %v is not finite", ErrEdit, v)
		}
	}
	z := linalg.Flatten(nil, l.InducingInputs)
	zj := z[j*q : (j+1)*q]
	col := make([]float64, mz)
	Cov(l.Kernel, col, z, zj)
	col[j] += m.Jitter
	kjj := l.Kernel.Eval(zj, zj)
	if !(kjj > 0) {
		return nil, fmt.Errorf("%w: k(z, z) = %v at inducing point %d", ErrNotPositiveDefinite, kjj, j)
	}
	nl := l.Clone()
	for k := 0; k < d; k++ {
		delta := mu[k] - l.QMu.At(j, k)
		if delta == 0 {
			continue
		}
		for i := 0; i < mz; i++ {
			nl.QMu.Set(i, k, l.QMu.At(i, k)+col[i]/kjj*delta)
		}
	}
	return withLayer(m, li, nl), nil
}

// AddInducing returns m with an inducing point added to layer li at z, as
// the last point, and q(u) over the enlarged set the exact joint posterior
// projection (the old points keep their q(u) marginals). With mu non-nil
// the function is then pulled so that it passes through mu at z
// (PullInducing).
func AddInducing(m *Model, li int, z, mu []float64) (*Model, error) {
	l, err := editLayer(m, li, -1)
	if err != nil {
		return nil, err
	}
	mz, q, _ := l.Dims()
	if mz+1 > MaxInducing {
		return nil, fmt.Errorf("%w: layer %d already has %d inducing points, the limit", ErrEdit, li+1, mz)
	}
	zz := mat.NewDense(mz+1, q, nil)
	zz.Slice(0, mz, 0, q).(*mat.Dense).Copy(l.InducingInputs)
	if err := setRow(zz, mz, z, "z"); err != nil {
		return nil, err
	}
	nl, err := ProjectInducing(l, m.Jitter, zz)
	if err != nil {
		return nil, err
	}
	out := withLayer(m, li, nl)
	if mu == nil {
		return out, nil
	}
	return PullInducing(out, li, mz, mu)
}

// RemoveInducing returns m without inducing point j of layer li, its
// q(u) marginalised: the other points keep their joint q(u) exactly.
func RemoveInducing(m *Model, li, j int) (*Model, error) {
	l, err := editLayer(m, li, j)
	if err != nil {
		return nil, err
	}
	mz, q, _ := l.Dims()
	if mz == 1 {
		return nil, fmt.Errorf("%w: layer %d has only one inducing point", ErrEdit, li+1)
	}
	zz := mat.NewDense(mz-1, q, nil)
	for i, r := 0, 0; i < mz; i++ {
		if i != j {
			zz.SetRow(r, l.InducingInputs.RawRowView(i)[:q])
			r++
		}
	}
	nl, err := ProjectInducing(l, m.Jitter, zz)
	if err != nil {
		return nil, err
	}
	return withLayer(m, li, nl), nil
}

// WithData returns m with training data x, y (normalised units), sharing
// the layers' parameters by copy: the model keeps its parameters and the
// optimizer carries on from them. The shapes must fit the first and last
// layer.
func WithData(m *Model, x, y *mat.Dense) (*Model, error) {
	c := withLayer(m, -1, nil)
	c.X, c.Y = x, y
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// CloneParams returns a copy of m that owns deep copies of its layers and
// shares X and Y, which no edit writes into: a cheap snapshot of the
// parameters (for undo) whatever the size of the data.
func (m *Model) CloneParams() *Model { return withLayer(m, -1, nil) }

// editLayer checks the layer and point indices (j < 0: no point) and the
// model, and returns the layer.
func editLayer(m *Model, li, j int) (*Layer, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: no model", ErrEdit)
	}
	if li < 0 || li >= len(m.Layers) {
		return nil, fmt.Errorf("%w: layer %d out of range 1…%d", ErrEdit, li+1, len(m.Layers))
	}
	l := m.Layers[li]
	if mz, _, _ := l.Dims(); j >= mz {
		return nil, fmt.Errorf("%w: inducing point %d out of range 1…%d of layer %d", ErrEdit, j+1, mz, li+1)
	}
	return l, nil
}

// setRow sets row i of a to v after checking its length and finiteness.
func setRow(a *mat.Dense, i int, v []float64, name string) error {
	_, c := a.Dims()
	if len(v) != c {
		return fmt.Errorf("%w: %s has %d values, want %d", ErrEdit, name, len(v), c)
	}
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%w: %s value %v is not finite", ErrEdit, name, x)
		}
	}
	a.SetRow(i, v)
	return nil
}

// withLayer returns a model that shares m's data, with layer li replaced by
// nl and every other layer deep-copied (li < 0: all copied).
func withLayer(m *Model, li int, nl *Layer) *Model {
	c := &Model{Jitter: m.Jitter, X: m.X, Y: m.Y, Layers: make([]*Layer, len(m.Layers))}
	for i, l := range m.Layers {
		if i == li {
			c.Layers[i] = nl
		} else {
			c.Layers[i] = l.Clone()
		}
	}
	return c
}
