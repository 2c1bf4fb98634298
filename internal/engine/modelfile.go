package engine

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"dgpviz/internal/dataset"

	"gonum.org/v1/gonum/mat"
)

// MaxModelFileBytes bounds the size of a model file that ReadModel accepts.
const MaxModelFileBytes = 256 << 20

// modelJSON is the model file format.
type modelJSON struct {
	Jitter *float64    `json:"jitter,omitempty"`
	Data   dataJSON    `json:"data"`
	Layers []layerJSON `json:"layers"`
	// Extra keeps fields that other packages add (normalisation, data set
	// name, initialisation) so that reading and writing preserves them.
	Extra map[string]json.RawMessage `json:"-"`
}

type dataJSON struct {
	X [][]float64 `json:"X"`
	Y [][]float64 `json:"Y"`
}

type kernelJSON struct {
	Type         string    `json:"type"`
	Variance     *float64  `json:"variance,omitempty"`
	Lengthscales []float64 `json:"lengthscales,omitempty"`
	Variances    []float64 `json:"variances,omitempty"`
	Lengthscale  *float64  `json:"lengthscale,omitempty"` // rbfiso
}

type layerJSON struct {
	Kernel         kernelJSON    `json:"kernel"`
	NoiseVariance  float64       `json:"noise_variance"`
	InducingInputs [][]float64   `json:"inducing_inputs"`
	QMu            [][]float64   `json:"q_mu"`
	QSqrt          [][][]float64 `json:"q_sqrt"`
}

// ModelFile is a model as read from or written to a JSON model file, with
// how its data were normalised (viz fit's files hold normalised data) and
// the file's other fields beyond the engine's own kept verbatim in Extra.
type ModelFile struct {
	Model *Model
	// NormX and NormY undo the normalisation of the file's data: original
	// = value·Scale + Mean per column (the identity when the file has no
	// "normalization" field). NormalizationJSON writes that field.
	NormX, NormY dataset.Normalizer
	Extra        map[string]json.RawMessage
}

// ReadModelFile reads and validates a model file.
func ReadModelFile(path string) (*ModelFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	defer f.Close()
	return ReadModel(f)
}

// ReadModel decodes and validates a JSON model. Errors name the layer and
// field at fault.
func ReadModel(r io.Reader) (*ModelFile, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxModelFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("engine: reading model: %w", err)
	}
	if len(data) > MaxModelFileBytes {
		return nil, fmt.Errorf("engine: model file larger than %d bytes", MaxModelFileBytes)
	}
	var mj modelJSON
	if err := json.Unmarshal(data, &mj); err != nil {
		return nil, fmt.Errorf("engine: model file is not valid JSON: %w", err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, fmt.Errorf("engine: model file is not a JSON object: %w", err)
	}
	delete(all, "jitter")
	delete(all, "data")
	delete(all, "layers")
	m, err := mj.model()
	if err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	_, q := m.X.Dims()
	_, d := m.Y.Dims()
	nx, ny, err := readNormalization(all["normalization"], q, d)
	if err != nil {
		return nil, err
	}
	delete(all, "normalization")
	return &ModelFile{Model: m, NormX: nx, NormY: ny, Extra: all}, nil
}

func (mj *modelJSON) model() (*Model, error) {
	m := &Model{Jitter: DefaultJitter}
	if mj.Jitter != nil {
		m.Jitter = *mj.Jitter
	}
	var err error
	if m.X, err = denseFromRows(mj.Data.X, "data.X", -1); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if m.Y, err = denseFromRows(mj.Data.Y, "data.Y", -1); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if len(mj.Layers) > MaxLayers {
		return nil, fmt.Errorf("engine: %d layers exceed the limit %d", len(mj.Layers), MaxLayers)
	}
	for i, lj := range mj.Layers {
		l, err := lj.layer()
		if err != nil {
			return nil, fmt.Errorf("engine: layer %d: %w", i, err)
		}
		m.Layers = append(m.Layers, l)
	}
	return m, nil
}

func (lj *layerJSON) layer() (*Layer, error) {
	z, err := denseFromRows(lj.InducingInputs, "inducing_inputs", -1)
	if err != nil {
		return nil, err
	}
	mz, q := z.Dims()
	var k Kernel
	switch lj.Kernel.Type {
	case "rbf":
		if lj.Kernel.Variance == nil {
			return nil, fmt.Errorf("kernel.variance: missing")
		}
		if len(lj.Kernel.Lengthscales) == 0 {
			return nil, fmt.Errorf("kernel.lengthscales: missing")
		}
		k = NewRBF(*lj.Kernel.Variance, lj.Kernel.Lengthscales)
	case "linear":
		if len(lj.Kernel.Variances) == 0 {
			return nil, fmt.Errorf("kernel.variances: missing")
		}
		k = NewLinear(lj.Kernel.Variances)
	case "rbfiso":
		if lj.Kernel.Variance == nil || lj.Kernel.Lengthscale == nil {
			return nil, fmt.Errorf("kernel.variance or kernel.lengthscale: missing")
		}
		if q < 1 {
			return nil, fmt.Errorf("kernel: rbfiso needs inducing_inputs with at least one column")
		}
		k = NewRBFIso(*lj.Kernel.Variance, *lj.Kernel.Lengthscale, q)
	default:
		return nil, fmt.Errorf("kernel.type: %q is not rbf, rbfiso or linear", lj.Kernel.Type)
	}
	if k.InputDim() != q {
		return nil, fmt.Errorf("kernel: %d lengthscales/variances but inducing_inputs has %d columns", k.InputDim(), q)
	}
	qmu, err := denseFromRows(lj.QMu, "q_mu", mz)
	if err != nil {
		return nil, err
	}
	_, d := qmu.Dims()
	if len(lj.QSqrt) != d {
		return nil, fmt.Errorf("q_sqrt: %d matrices, want one per output (%d)", len(lj.QSqrt), d)
	}
	l := &Layer{Kernel: k, NoiseVariance: lj.NoiseVariance, InducingInputs: z, QMu: qmu}
	for j, s := range lj.QSqrt {
		if len(s) != mz {
			return nil, fmt.Errorf("q_sqrt[%d]: %d rows, want %d", j, len(s), mz)
		}
		a := mat.NewDense(mz, mz, nil)
		for r, row := range s {
			if len(row) != mz && len(row) != r+1 {
				return nil, fmt.Errorf("q_sqrt[%d][%d]: %d entries, want %d (or %d, the lower triangle)", j, r, len(row), mz, r+1)
			}
			for c := 0; c <= r; c++ {
				a.Set(r, c, row[c])
			}
		}
		l.QSqrt = append(l.QSqrt, a)
	}
	return l, nil
}

// denseFromRows converts rows to a matrix, requiring a rectangular,
// non-empty shape and, if rows ≥ 0, that many rows.
func denseFromRows(v [][]float64, name string, rows int) (*mat.Dense, error) {
	if len(v) == 0 {
		return nil, fmt.Errorf("%s: missing or empty", name)
	}
	if rows >= 0 && len(v) != rows {
		return nil, fmt.Errorf("%s: %d rows, want %d", name, len(v), rows)
	}
	c := len(v[0])
	if c == 0 {
		return nil, fmt.Errorf("%s[0]: empty row", name)
	}
	if c > MaxDim && name != "data.Y" && name != "data.X" {
		return nil, fmt.Errorf("%s: %d columns exceed the limit %d", name, c, MaxDim)
	}
	a := mat.NewDense(len(v), c, nil)
	for i, row := range v {
		if len(row) != c {
			return nil, fmt.Errorf("%s[%d]: %d entries, but row 0 has %d", name, i, len(row), c)
		}
		a.SetRow(i, row)
	}
	return a, nil
}

// WriteModel writes m (and extra fields) as an indented JSON model file.
// The output is deterministic: the same model gives the same bytes.
func WriteModel(w io.Writer, m *Model, extra map[string]json.RawMessage) error {
	out := map[string]any{}
	for k, v := range extra {
		out[k] = v
	}
	j := m.Jitter
	out["jitter"] = j
	out["data"] = dataJSON{X: MatrixRows(m.X), Y: MatrixRows(m.Y)}
	var layers []layerJSON
	for _, l := range m.Layers {
		layers = append(layers, layerToJSON(l))
	}
	out["layers"] = layers
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("engine: writing model: %w", err)
	}
	return nil
}

func layerToJSON(l *Layer) layerJSON {
	lj := layerJSON{NoiseVariance: l.NoiseVariance, InducingInputs: MatrixRows(l.InducingInputs), QMu: MatrixRows(l.QMu)}
	switch k := l.Kernel.(type) {
	case *RBF:
		v := k.Variance
		lj.Kernel = kernelJSON{Type: "rbf", Variance: &v, Lengthscales: append([]float64(nil), k.Lengthscales...)}
	case *Linear:
		lj.Kernel = kernelJSON{Type: "linear", Variances: append([]float64(nil), k.Variances...)}
	case *RBFIso:
		v, l := k.Variance(), k.Lengthscale()
		lj.Kernel = kernelJSON{Type: "rbfiso", Variance: &v, Lengthscale: &l}
	}
	for _, s := range l.QSqrt {
		lj.QSqrt = append(lj.QSqrt, lowerRows(s))
	}
	return lj
}

// MatrixRows returns a's rows as slices, the form JSON files use; nil
// for a nil matrix.
func MatrixRows(a mat.Matrix) [][]float64 {
	if a == nil {
		return nil
	}
	r, c := a.Dims()
	out := make([][]float64, r)
	for i := range out {
		out[i] = make([]float64, c)
		for j := range out[i] {
			out[i][j] = a.At(i, j)
		}
	}
	return out
}

// lowerRows returns the full square matrix with zeros above the diagonal.
func lowerRows(a mat.Matrix) [][]float64 {
	out := MatrixRows(a)
	for i := range out {
		for j := i + 1; j < len(out[i]); j++ {
			out[i][j] = 0
		}
	}
	return out
}

// GradientJSON is the JSON form of a gradient, as printed by `viz eval`.
type GradientJSON struct {
	Layers []LayerGradientJSON `json:"layers"`
}

// LayerGradientJSON is one layer's gradient in the model file's names.
type LayerGradientJSON struct {
	Kernel         map[string]any `json:"kernel"`
	NoiseVariance  float64        `json:"noise_variance"`
	InducingInputs [][]float64    `json:"inducing_inputs"`
	QMu            [][]float64    `json:"q_mu"`
	QSqrt          [][][]float64  `json:"q_sqrt"`
}

// JSON converts g to the model file's field names, for model m.
func (g *Gradient) JSON(m *Model) GradientJSON {
	var out GradientJSON
	for i, lg := range g.Layers {
		kj := map[string]any{}
		switch m.Layers[i].Kernel.(type) {
		case *RBF:
			kj["variance"] = lg.Kernel[0]
			kj["lengthscales"] = lg.Kernel[1:]
		case *Linear:
			kj["variances"] = lg.Kernel
		case *RBFIso:
			kj["variance"] = lg.Kernel[0]
			kj["lengthscale"] = lg.Kernel[1]
		}
		lj := LayerGradientJSON{Kernel: kj, NoiseVariance: lg.NoiseVariance, InducingInputs: MatrixRows(lg.InducingInputs), QMu: MatrixRows(lg.QMu)}
		for _, s := range lg.QSqrt {
			lj.QSqrt = append(lj.QSqrt, lowerRows(s))
		}
		out.Layers = append(out.Layers, lj)
	}
	return out
}
