package engine

// Group names a kind of parameter, for freezing and for transforms.
type Group int

const (
	GroupKernel   Group = iota // kernel hyperparameters (positive)
	GroupNoise                 // noise variance (positive)
	GroupInducing              // inducing inputs Z
	GroupQMu                   // variational means
	GroupQSqrt                 // Cholesky factors of the variational covariances
)

var groupNames = [...]string{"kernel", "noise", "inducing", "q_mu", "q_sqrt"}

func (g Group) String() string { return groupNames[g] }

// GroupNames returns the parameter groups' names in order: the one list
// the command line, the protocol and the page use.
func GroupNames() []string { return groupNames[:] }

// ParseGroup parses a group name as printed by Group.String.
func ParseGroup(s string) (Group, bool) {
	for i, n := range groupNames {
		if n == s {
			return Group(i), true
		}
	}
	return 0, false
}

// ParamInfo describes one entry of the flat parameter vector.
type ParamInfo struct {
	Layer    int
	Group    Group
	Positive bool // constrained > 0 (kernel, noise)
	Diagonal bool // a diagonal entry of a q_sqrt factor (kept away from 0)
}

// ParamLayout lists the flat parameter vector of m: for each layer, the
// kernel hyperparameters, the noise variance, Z (row-major), q_mu
// (row-major) and the lower triangles of q_sqrt (row by row).
func (m *Model) ParamLayout() []ParamInfo {
	var out []ParamInfo
	for i, l := range m.Layers {
		mz, q, d := l.Dims()
		for range l.Kernel.NumParams() {
			out = append(out, ParamInfo{Layer: i, Group: GroupKernel, Positive: true})
		}
		out = append(out, ParamInfo{Layer: i, Group: GroupNoise, Positive: true})
		for range mz * q {
			out = append(out, ParamInfo{Layer: i, Group: GroupInducing})
		}
		for range mz * d {
			out = append(out, ParamInfo{Layer: i, Group: GroupQMu})
		}
		for range d {
			for r := 0; r < mz; r++ {
				for c := 0; c <= r; c++ {
					out = append(out, ParamInfo{Layer: i, Group: GroupQSqrt, Diagonal: r == c})
				}
			}
		}
	}
	return out
}

// Params appends the flat parameter vector of m to dst (see ParamLayout).
func (m *Model) Params(dst []float64) []float64 {
	for _, l := range m.Layers {
		dst = append(dst, l.Kernel.Params()...)
		dst = append(dst, l.NoiseVariance)
		dst = appendDense(dst, l.InducingInputs.RawMatrix())
		dst = l.AppendQ(dst)
	}
	return dst
}

// SetParams sets m's parameters from the flat vector p (see ParamLayout).
// It panics if p has the wrong length.
func (m *Model) SetParams(p []float64) {
	k := 0
	take := func(n int) []float64 { v := p[k : k+n]; k += n; return v }
	for _, l := range m.Layers {
		l.Kernel.SetParams(take(l.Kernel.NumParams()))
		l.NoiseVariance = take(1)[0]
		mz, q, d := l.Dims()
		setDense(l.InducingInputs, take(mz*q))
		setDense(l.QMu, take(mz*d))
		for _, s := range l.QSqrt {
			setLower(s, take(mz*(mz+1)/2))
		}
	}
	if k != len(p) {
		panic("engine: SetParams: parameter vector has the wrong length")
	}
}

// AppendQ appends the layer's q(u) to dst as in Model.Params: q_mu
// row-major, then the lower triangles of q_sqrt row by row.
func (l *Layer) AppendQ(dst []float64) []float64 {
	dst = appendDense(dst, l.QMu.RawMatrix())
	for _, s := range l.QSqrt {
		dst = appendLower(dst, s.RawMatrix())
	}
	return dst
}

// Flatten appends the gradient to dst in the order of Model.ParamLayout.
func (g *Gradient) Flatten(dst []float64) []float64 {
	for _, l := range g.Layers {
		dst = append(dst, l.Kernel...)
		dst = append(dst, l.NoiseVariance)
		dst = appendDense(dst, l.InducingInputs.RawMatrix())
		dst = appendDense(dst, l.QMu.RawMatrix())
		for _, s := range l.QSqrt {
			dst = appendLower(dst, s.RawMatrix())
		}
	}
	return dst
}

func appendDense(dst []float64, r blas64General) []float64 {
	for i := 0; i < r.Rows; i++ {
		dst = append(dst, r.Data[i*r.Stride:i*r.Stride+r.Cols]...)
	}
	return dst
}

func appendLower(dst []float64, r blas64General) []float64 {
	for i := 0; i < r.Rows; i++ {
		dst = append(dst, r.Data[i*r.Stride:i*r.Stride+i+1]...)
	}
	return dst
}

func setDense(a denseSetter, v []float64) {
	_, c := a.Dims()
	for i, x := range v {
		a.Set(i/c, i%c, x)
	}
}

func setLower(a denseSetter, v []float64) {
	k := 0
	r, _ := a.Dims()
	for i := 0; i < r; i++ {
		for j := 0; j <= i; j++ {
			a.Set(i, j, v[k])
			k++
		}
	}
}
