package modelfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"unicode/utf8"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// The model file: JSON, documented field by field in docs/model-format.md.
// Short arrays are JSON numbers; arrays of more than encodeAbove values are
// compact (arrayJSON): little-endian binary in base64, the data in their
// original units as integers when that re-normalises bit for bit, and Y
// stored once when it is X.

// MaxBytes bounds the size of a model file that Read accepts.
const MaxBytes = 256 << 20

// encodeAbove is the number of values above which WriteModel writes an
// array compactly: a person reads a short list, a long one is for programs,
// and as indented text a value costs ~25 bytes (a Frey model's copy of its
// data was 56 MB).
const encodeAbove = 1024

type dataJSON struct {
	X any `json:"X"` // [][]float64 or *arrayJSON
	Y any `json:"Y"`
	// The DataInfo fields, each written when known.
	XUnit  string      `json:"x_unit,omitempty"`
	YUnit  string      `json:"y_unit,omitempty"`
	XNames []string    `json:"x_names,omitempty"`
	YNames []string    `json:"y_names,omitempty"`
	Shape  *[2]int     `json:"shape,omitempty"`
	Range  *[2]float64 `json:"range,omitempty"`
}

// DataInfo is what a model file says of its data beyond the numbers, each
// field optional: the units of X and Y in original units ("s", "dBm"),
// and for outputs that are the pixels of images, the images' shape (rows,
// columns; pixel k of a row at row k / Shape[1], column k % Shape[1]) and
// the pixels' nominal range (drawn from black to white). XNames and YNames
// are the data's own names of X's and Y's columns, verbatim (a CSV's
// header: "x_time", "y_ap1 [dBm]"), one per column, which the commands'
// outputs carry; nil when unknown. Readers use them to label and draw; the
// model does not depend on them.
type DataInfo struct {
	XUnit, YUnit   string
	Shape          [2]int
	Range          [2]float64
	XNames, YNames []string
}

// IsZero reports whether the file says nothing of its data.
func (in DataInfo) IsZero() bool {
	return in.XUnit == "" && in.YUnit == "" && in.Shape == [2]int{} && in.Range == [2]float64{} && in.XNames == nil && in.YNames == nil
}

// InfoOf returns what ds says of its data (see DataInfo).
func InfoOf(ds *dataset.Dataset) DataInfo {
	return DataInfo{XUnit: ds.InputUnit, YUnit: ds.OutputUnit, Shape: ds.Shape, Range: ds.Range, XNames: ds.InputNames, YNames: ds.OutputNames}
}

// maxUnitBytes bounds a unit's name in a model file, maxNameBytes a
// column's name.
const (
	maxUnitBytes = 64
	maxNameBytes = 256
)

type kernelJSON struct {
	Type         string    `json:"type"`
	Variance     *float64  `json:"variance,omitempty"`
	Lengthscales []float64 `json:"lengthscales,omitempty"`
	Variances    []float64 `json:"variances,omitempty"`
	Lengthscale  *float64  `json:"lengthscale,omitempty"` // rbfiso
}

type layerJSON struct {
	Kernel         kernelJSON `json:"kernel"`
	NoiseVariance  float64    `json:"noise_variance"`
	InducingInputs any        `json:"inducing_inputs"` // [][]float64 or *arrayJSON
	QMu            any        `json:"q_mu"`
	QSqrt          any        `json:"q_sqrt"` // [][][]float64 or *arrayJSON
}

// arrayJSON is an array in compact form: Shape's extents, the values
// row-major as little-endian Dtype, compressed with zlib when Compression
// says so (RFC 1950; WriteModel always does), in standard base64 (RFC
// 4648, padded).
// Units "original" marks data stored in their original units, which the
// reader normalises with the file's normalisation; Triangle "lower" a
// stack of square matrices of which only the lower triangles are stored,
// row by row. SameAs "X" (for data.Y alone) says Y's stored values are X's.
// DataSet refers to the data of a public data set (data only, in
// original units) instead of holding them.
type arrayJSON struct {
	SameAs      string      `json:"same_as,omitempty"`
	DataSet     *dataSetRef `json:"data_set,omitempty"`
	Shape       []int       `json:"shape,omitempty"`
	Dtype       string      `json:"dtype,omitempty"`
	Units       string      `json:"units,omitempty"`
	Triangle    string      `json:"triangle,omitempty"`
	Compression string      `json:"compression,omitempty"`
	Base64      string      `json:"base64,omitempty"`
	// raw, when not nil, are the values before compression, from which
	// Write streams Base64 (the data: float64Stream).
	raw []byte
}

// dataSetRef names a public data set's columns (dataset.Remotes): its
// inputs or its outputs, the training rows as dataset.Load reads them.
// File is for people; the checksum is the file's, so that a reader knows
// it holds the very data the model was fitted to. Path is where the file
// was when the model was fitted, absolute: a reader on that machine looks
// there first, from any folder (ReadOptions.OpenDataPaths).
type dataSetRef struct {
	Name    string `json:"name"`
	File    string `json:"file"`
	Path    string `json:"path,omitempty"`
	SHA256  string `json:"sha256"`
	Columns string `json:"columns"` // "inputs" or "outputs"
}

// File is a model as read from or written to a JSON model file, with
// how its data were normalised (viz fit's files hold normalised data) and
// the file's other fields beyond the engine's own kept verbatim in Extra.
type File struct {
	Model *engine.Model
	// NormX and NormY undo the normalisation of the file's data: original
	// = value·Scale + Mean per column (the identity when the file has no
	// "normalization" field). NormalizationJSON writes that field.
	NormX, NormY dataset.Normalizer
	// Info is what the file says of its data beyond the numbers (zero when
	// it says nothing).
	Info DataInfo
	// Data is the data set the model's data came from, when it is a
	// public one (its Source set): the writer then refers to the data set
	// for every large data array that is its inputs or outputs, normalised,
	// bit for bit, instead of writing the values out, and writes the data
	// out otherwise. The reader sets it to the data set it loaded for
	// such a reference (nil when the file holds its data).
	Data *dataset.Dataset
	// DataPath is where Data's file is on the machine that writes the
	// file, absolute (dataset.Dataset.Path): the reference records it, and
	// readers there look for the data at it first, from any folder. viz
	// fit sets it; the page leaves it empty, as a server does not tell
	// its paths. The reader sets it to the path the reference records.
	DataPath string
	Extra    map[string]json.RawMessage
}

// ReadOptions are the limits a model file is read with. Each is checked
// as the file is read, before the memory it guards is allocated, so a
// hostile file costs little more than its own size. Zero fields take the
// engine's own limits.
type ReadOptions struct {
	MaxRows     int // data rows (default MaxData)
	MaxColumns  int // columns of data.X and data.Y (default MaxDim)
	MaxLayers   int // layers (default MaxLayers)
	MaxWidth    int // outputs of a hidden layer (default MaxDim)
	MaxInducing int // inducing points of a layer (default MaxInducing)
	// LoadDataSet returns the public data set (dataset.Remotes) called name,
	// for a file whose data refer to one; nil: dataset.Load(name), which
	// finds it on this machine or says how to get it.
	LoadDataSet func(name string) (*dataset.Dataset, error)
	// OpenDataPaths lets the reader open the file that such a reference
	// says the model was fitted from (its absolute path) before it asks
	// LoadDataSet, the file's checksum checked in either case. ReadFile
	// sets it: a person's own model file may name any file of theirs. A
	// server reading files from others leaves it false, so that a file
	// cannot make it open paths of its choosing.
	OpenDataPaths bool
	// Budget, when not nil, is told the bytes the reader is about to hold
	// in all, before each large allocation; its error ends the reading
	// and is returned as it is. Without one the reader holds at most
	// MaxMemory.
	Budget func(bytes int64) error
}

// MaxMemory bounds the memory ReadWith takes without a Budget:
// compressed arrays can claim far more than the file's size.
const MaxMemory = 4 << 30

func (o ReadOptions) withDefaults() ReadOptions {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxRows, engine.MaxData)
	def(&o.MaxColumns, engine.MaxDim)
	def(&o.MaxLayers, engine.MaxLayers)
	def(&o.MaxWidth, engine.MaxDim)
	def(&o.MaxInducing, engine.MaxInducing)
	if o.LoadDataSet == nil {
		o.LoadDataSet = dataset.Load
	}
	if o.Budget == nil {
		o.Budget = func(bytes int64) error {
			if bytes > MaxMemory {
				return fmt.Errorf("the model file needs more than %d GiB of memory", MaxMemory>>30)
			}
			return nil
		}
	}
	return o
}

// ReadFile reads and validates a model file of one's own, with the
// engine's own limits. Data it refers to are looked for first where the
// model was fitted, then where LoadDataSet looks (ReadOptions.OpenDataPaths).
func ReadFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadWith(f, ReadOptions{OpenDataPaths: true})
}

// Read reads and validates a JSON model with the engine's own limits
// (see ReadWith).
func Read(r io.Reader) (*File, error) {
	return ReadWith(r, ReadOptions{})
}

// ReadWith reads and validates a JSON model, streaming: limits are
// checked as the values come, so nothing larger than the limits allow is
// allocated. It reads files in both forms of arrays (JSON numbers and
// arrayJSON). Errors name the layer (counted from 1) and field at fault.
func ReadWith(r io.Reader, opt ReadOptions) (*File, error) {
	mr := &modelReader{s: newJSONScanner(r, MaxBytes), opt: opt.withDefaults()}
	mf, err := mr.read()
	switch {
	case errors.Is(err, errModelTooLarge):
		return nil, fmt.Errorf("the model file is larger than %d MiB", MaxBytes>>20)
	case err != nil:
		return nil, err
	}
	return mf, nil
}

// modelReader reads one model file (ReadWith).
type modelReader struct {
	s    *jsonScanner
	opt  ReadOptions
	held int64 // bytes of arrays held, as told to opt.Budget

	x, y       *dataArray // data.X and data.Y as stored
	info       DataInfo   // data's other fields
	layers     []*engine.Layer
	jitter     *float64
	norm       *normalizationJSON
	dataSet    *dataset.Dataset // the public data set the data refer to
	dataPath   string           // the path its reference records
	extra      map[string]json.RawMessage
	q, d       int // columns of X and Y, once read (0 before)
	haveFields map[string]bool
}

// dataArray is data.X or data.Y as stored: original marks values in the
// data's original units, normalised once the normalisation is read.
type dataArray struct {
	vals       []float64
	rows, cols int
	original   bool
}

// charge tells the budget of n more bytes held.
func (mr *modelReader) charge(n int64) error {
	mr.held += n
	if mr.opt.Budget != nil && n > 0 {
		if err := mr.opt.Budget(mr.held); err != nil {
			return finalError{err}
		}
	}
	return nil
}

// finalError is an error that says all there is to say: a limit, the
// budget. Syntax errors (*syntaxError) are final too. Neither within nor
// inLayer adds context to them.
type finalError struct{ error }

func (e finalError) Unwrap() error { return e.error }

func finalf(format string, args ...any) error { return finalError{fmt.Errorf(format, args...)} }

// placedError is an error that names the field it concerns: within adds
// no other field name to it (the innermost place is the most precise).
type placedError struct{ error }

func (e placedError) Unwrap() error { return e.error }

func placef(format string, args ...any) error { return placedError{fmt.Errorf(format, args...)} }

func isFinal(err error) bool {
	var fe finalError
	var se *syntaxError
	return errors.As(err, &fe) || errors.As(err, &se) || errors.Is(err, errModelTooLarge)
}

// within names place (a field) in err, unless err is final or names its
// field already.
func within(place string, err error) error {
	var pe placedError
	if err == nil || isFinal(err) || errors.As(err, &pe) {
		return err
	}
	return placedError{fmt.Errorf("%s: %w", place, err)}
}

// inLayer names layer i (counted from 0) in err, unless err is final.
func inLayer(i int, err error) error {
	if err == nil || isFinal(err) {
		return err
	}
	return fmt.Errorf("layer %d: %w", i+1, err)
}

func (mr *modelReader) release(n int64) { mr.held -= n }

// floats returns a slice of n float64s, charged first.
func (mr *modelReader) floats(n int) ([]float64, error) {
	if err := mr.charge(8 * int64(n)); err != nil {
		return nil, err
	}
	return make([]float64, n), nil
}

func (mr *modelReader) read() (*File, error) {
	s := mr.s
	mr.extra = map[string]json.RawMessage{}
	mr.haveFields = map[string]bool{}
	err := s.object(func(key string) error {
		switch key {
		case "jitter", "data", "layers", "normalization":
			if mr.haveFields[key] {
				return fmt.Errorf("the model file has two %q fields", key)
			}
			mr.haveFields[key] = true
		}
		switch key {
		case "jitter":
			if null, err := s.null(); null || err != nil {
				return err
			}
			v, err := s.number()
			if err != nil {
				return within(key, err)
			}
			mr.jitter = &v
			return nil
		case "data":
			return mr.data()
		case "layers":
			return s.array(func(i int) error {
				if i >= mr.opt.MaxLayers {
					return finalf("the model has more layers than the limit of %d layers", mr.opt.MaxLayers)
				}
				l, err := mr.layer(i)
				if err != nil {
					return inLayer(i, err)
				}
				mr.layers = append(mr.layers, l)
				return nil
			})
		case "normalization":
			if null, err := s.null(); null || err != nil {
				return err
			}
			nj, err := readNormalizationJSON(s, mr.opt.MaxColumns)
			if err != nil {
				return within("normalization", err)
			}
			mr.norm = nj
			return nil
		}
		raw, err := s.raw(mr.charge)
		if err != nil {
			return err
		}
		mr.extra[key] = raw
		return nil
	})
	if err == nil {
		err = s.atEnd()
	}
	if err != nil {
		return nil, err
	}
	return mr.model()
}

// model assembles and validates what was read.
func (mr *modelReader) model() (*File, error) {
	m := &engine.Model{Jitter: engine.DefaultJitter, Layers: mr.layers}
	if mr.jitter != nil {
		m.Jitter = *mr.jitter
	}
	if !(m.Jitter >= 0) || math.IsInf(m.Jitter, 0) {
		return nil, fmt.Errorf("jitter %v must be finite and ≥ 0", m.Jitter)
	}
	switch {
	case mr.x == nil:
		return nil, fmt.Errorf("data.X: missing")
	case mr.y == nil:
		return nil, fmt.Errorf("data.Y: missing")
	case mr.x.rows != mr.y.rows:
		return nil, fmt.Errorf("data: X has %d rows but Y has %d", mr.x.rows, mr.y.rows)
	}
	nx, ny, err := checkNormalization(mr.norm, mr.x.cols, mr.y.cols)
	if err != nil {
		return nil, err
	}
	if m.X, err = mr.x.matrix(nx); err != nil {
		return nil, fmt.Errorf("data.X: %w", err)
	}
	if m.Y, err = mr.y.matrix(ny); err != nil {
		return nil, fmt.Errorf("data.Y: %w", err)
	}
	if err := engine.CheckFinite(m.X, "data.X"); err != nil {
		return nil, err
	}
	if err := engine.CheckFinite(m.Y, "data.Y"); err != nil {
		return nil, err
	}
	if len(m.Layers) == 0 {
		return nil, fmt.Errorf("the model has no layers")
	}
	in := mr.x.cols
	for i, l := range m.Layers {
		if err := l.Validate(in); err != nil {
			return nil, fmt.Errorf("layer %d: %w", i+1, err)
		}
		_, _, in = l.Dims()
		if i+1 < len(m.Layers) && in > mr.opt.MaxWidth {
			return nil, fmt.Errorf("hidden layer %d has width %d, more than the limit of %d", i+1, in, mr.opt.MaxWidth)
		}
	}
	if in != mr.y.cols {
		return nil, fmt.Errorf("layer %d: q_mu has %d columns but Y has %d", len(m.Layers), in, mr.y.cols)
	}
	if err := mr.checkInfo(); err != nil {
		return nil, err
	}
	return &File{Model: m, NormX: nx, NormY: ny, Info: mr.info, Data: mr.dataSet, DataPath: mr.dataPath, Extra: mr.extra}, nil
}

// checkInfo checks the data's shape against its columns: an image of
// Shape[0] × Shape[1] pixels per output row.
func (mr *modelReader) checkInfo() error {
	in := mr.info
	if in.Shape != [2]int{} && in.Shape[0]*in.Shape[1] != mr.y.cols {
		return fmt.Errorf("data.shape: %d × %d pixels, but Y has %d columns", in.Shape[0], in.Shape[1], mr.y.cols)
	}
	if in.XNames != nil && len(in.XNames) != mr.x.cols {
		return fmt.Errorf("data.x_names: %d names, but X has %d columns", len(in.XNames), mr.x.cols)
	}
	if in.YNames != nil && len(in.YNames) != mr.y.cols {
		return fmt.Errorf("data.y_names: %d names, but Y has %d columns", len(in.YNames), mr.y.cols)
	}
	return nil
}

// dataInfoField reads one of data's DataInfo fields.
func (mr *modelReader) dataInfoField(key string) error {
	s := mr.s
	if null, err := s.null(); null || err != nil {
		return err
	}
	switch key {
	case "x_unit", "y_unit":
		u, err := s.str(maxUnitBytes, "data."+key)
		if err != nil {
			return placedError{err}
		}
		if key == "x_unit" {
			mr.info.XUnit = u
		} else {
			mr.info.YUnit = u
		}
		return nil
	case "x_names", "y_names":
		names := []string{}
		err := s.array(func(i int) error {
			if i >= mr.opt.MaxColumns {
				return placef("data.%s: more than %d names", key, mr.opt.MaxColumns)
			}
			if err := mr.charge(maxNameBytes); err != nil {
				return err
			}
			name, err := s.str(maxNameBytes, fmt.Sprintf("data.%s[%d]", key, i))
			if err != nil {
				return placedError{err}
			}
			names = append(names, name)
			return nil
		})
		if key == "x_names" {
			mr.info.XNames = names
		} else {
			mr.info.YNames = names
		}
		return err
	}
	var v []float64
	err := s.array(func(i int) error {
		if i >= 2 {
			return placef("data.%s: more than 2 numbers", key)
		}
		x, err := s.number()
		v = append(v, x)
		return err
	})
	if err != nil {
		return err
	}
	if len(v) != 2 {
		return placef("data.%s: %d numbers, want 2", key, len(v))
	}
	if key == "range" {
		if math.IsNaN(v[0]) || math.IsInf(v[0], 0) || math.IsInf(v[1], 0) || !(v[1] > v[0]) {
			return placef("data.range: [%v, %v] is not a range of finite numbers, low to high", v[0], v[1])
		}
		mr.info.Range = [2]float64{v[0], v[1]}
		return nil
	}
	for _, x := range v {
		if x != math.Trunc(x) || x < 1 || x > float64(mr.opt.MaxColumns) {
			return placef("data.shape: %v is not a whole number of pixels from 1 to %d", x, mr.opt.MaxColumns)
		}
	}
	mr.info.Shape = [2]int{int(v[0]), int(v[1])}
	return nil
}

// matrix returns the data as the model holds them: normalised with nz
// when stored in original units, as (value − mean)/scale exactly as
// dataset.Normalizer.Apply computes it, so values re-normalise bit for
// bit.
func (a *dataArray) matrix(nz dataset.Normalizer) (*mat.Dense, error) {
	if a.rows == 0 || a.cols == 0 {
		return nil, fmt.Errorf("missing or empty")
	}
	if a.original {
		for i := range a.rows {
			row := a.vals[i*a.cols : (i+1)*a.cols]
			for j, v := range row {
				row[j] = (v - nz.Mean[j]) / nz.Scale[j]
			}
		}
	}
	return mat.NewDense(a.rows, a.cols, a.vals), nil
}

func (mr *modelReader) data() error {
	s := mr.s
	o := mr.opt
	have := map[string]bool{}
	err := s.object(func(key string) error {
		switch key {
		case "x_unit", "y_unit", "x_names", "y_names", "shape", "range":
			return within("data."+key, mr.dataInfoField(key))
		case "X", "Y":
		default:
			return s.skip(0)
		}
		if have[key] {
			return fmt.Errorf("data has two %q fields", key)
		}
		have[key] = true
		name := "data." + key
		spec := arraySpec{name: name, rank: 2, data: true, limits: [3]axisLimit{
			{o.MaxRows, func() error { return finalf("the model's data has more rows than the limit of %d rows", o.MaxRows) }},
			{o.MaxColumns, func() error {
				return finalf("the model's data has more columns than the limit of %d columns", o.MaxColumns)
			}},
		}}
		a, err := mr.array(spec)
		if err != nil {
			return err
		}
		if a.sameAs != "" {
			if key != "Y" || a.sameAs != "X" || mr.x == nil {
				return fmt.Errorf(`%s: same_as %q: only data.Y may be "X", after data.X`, name, a.sameAs)
			}
			vals, err := mr.floats(len(mr.x.vals))
			if err != nil {
				return err
			}
			copy(vals, mr.x.vals)
			mr.y = &dataArray{vals: vals, rows: mr.x.rows, cols: mr.x.cols, original: mr.x.original}
			mr.d = mr.y.cols
			return nil
		}
		da := &dataArray{vals: a.vals, rows: a.shape[0], cols: a.shape[1], original: a.original}
		if key == "X" {
			mr.x, mr.q = da, da.cols
		} else {
			mr.y, mr.d = da, da.cols
		}
		return nil
	})
	if err != nil {
		return err
	}
	return nil
}

// layer reads layer i (counted from 0) of the layers array.
func (mr *modelReader) layer(i int) (*engine.Layer, error) {
	s := mr.s
	o := mr.opt
	var (
		kj    *kernelJSON
		noise *float64
		z     *array
		qmu   *array
		qsqrt *array
	)
	// Known shapes check what follows as early as the file's order allows:
	// the data's widths bound the first layer's input and the outputs.
	maxIn := max(o.MaxColumns, o.MaxWidth)
	if i == 0 && mr.q > 0 {
		maxIn = mr.q
	}
	maxOut := max(o.MaxColumns, o.MaxWidth)
	if mr.d > 0 {
		maxOut = max(o.MaxWidth, mr.d)
	}
	tooManyInducing := func() error {
		return finalf("layer %d has more inducing points than the limit of %d inducing points", i+1, o.MaxInducing)
	}
	tooWideIn := func() error {
		return finalf("layer %d has more inputs than the limit of %d inputs", i+1, maxIn)
	}
	tooWideOut := func() error {
		return finalf("layer %d has more outputs than the limit of %d outputs", i+1, maxOut)
	}
	m := func() int { // inducing points, once known
		switch {
		case z != nil:
			return z.shape[0]
		case qmu != nil:
			return qmu.shape[0]
		case qsqrt != nil:
			return qsqrt.shape[1]
		}
		return 0
	}
	dOut := func() int {
		switch {
		case qmu != nil:
			return qmu.shape[1]
		case qsqrt != nil:
			return qsqrt.shape[0]
		}
		return 0
	}
	have := map[string]bool{}
	err := s.object(func(key string) error {
		if have[key] {
			return fmt.Errorf("two %q fields", key)
		}
		have[key] = true
		var err error
		mLim := axisLimit{o.MaxInducing, tooManyInducing}
		if mz := m(); mz > 0 {
			mLim = axisLimit{mz, func() error { return fmt.Errorf("%s: more than %d rows, the number of inducing points", key, mz) }}
		}
		switch key {
		case "kernel":
			kj, err = mr.kernel(maxIn)
			if err != nil {
				return within("kernel", err)
			}
			return nil
		case "noise_variance":
			v, err := s.number()
			if err != nil {
				return within(key, err)
			}
			noise = &v
			return nil
		case "inducing_inputs":
			z, err = mr.array(arraySpec{name: key, rank: 2, limits: [3]axisLimit{mLim, {maxIn, tooWideIn}}})
			return err
		case "q_mu":
			outLim := axisLimit{maxOut, tooWideOut}
			if d := dOut(); d > 0 {
				outLim = axisLimit{d, func() error { return fmt.Errorf("q_mu: more than %d columns, one per q_sqrt matrix", d) }}
			}
			qmu, err = mr.array(arraySpec{name: key, rank: 2, limits: [3]axisLimit{mLim, outLim}})
			return err
		case "q_sqrt":
			outLim := axisLimit{maxOut, tooWideOut}
			if d := dOut(); d > 0 {
				outLim = axisLimit{d, func() error { return fmt.Errorf("q_sqrt: more than %d matrices, one per output", d) }}
			}
			qsqrt, err = mr.array(arraySpec{name: key, rank: 3, limits: [3]axisLimit{outLim, mLim, mLim}})
			return err
		}
		return s.skip(0)
	})
	if err != nil {
		return nil, err
	}
	switch {
	case kj == nil:
		return nil, fmt.Errorf("kernel: missing")
	case noise == nil:
		return nil, fmt.Errorf("noise_variance: missing")
	case z == nil:
		return nil, fmt.Errorf("inducing_inputs: missing")
	case qmu == nil:
		return nil, fmt.Errorf("q_mu: missing")
	case qsqrt == nil:
		return nil, fmt.Errorf("q_sqrt: missing")
	}
	mz, q := z.shape[0], z.shape[1]
	k, err := kj.kernel(q)
	if err != nil {
		return nil, err
	}
	if qmu.shape[0] != mz {
		return nil, fmt.Errorf("q_mu: %d rows, want %d", qmu.shape[0], mz)
	}
	d := qmu.shape[1]
	if qsqrt.shape[0] != d {
		return nil, fmt.Errorf("q_sqrt: %d matrices, want one per output (%d)", qsqrt.shape[0], d)
	}
	if qsqrt.shape[1] != mz {
		return nil, fmt.Errorf("q_sqrt[0]: %d rows, want %d", qsqrt.shape[1], mz)
	}
	l := &engine.Layer{Kernel: k, NoiseVariance: *noise,
		InducingInputs: mat.NewDense(mz, q, z.vals), QMu: mat.NewDense(mz, d, qmu.vals)}
	l.QSqrt = make([]*mat.Dense, d)
	for j := range l.QSqrt {
		l.QSqrt[j] = mat.NewDense(mz, mz, qsqrt.mats[j])
	}
	return l, nil
}

// kernel reads a layer's kernel object; vectors have at most maxIn entries.
func (mr *modelReader) kernel(maxIn int) (*kernelJSON, error) {
	s := mr.s
	var kj kernelJSON
	list := func(name string) ([]float64, error) {
		var out []float64
		err := s.array(func(i int) error {
			if i >= maxIn {
				return fmt.Errorf("more than %d entries, the layer's input width", maxIn)
			}
			v, err := s.number()
			out = append(out, v)
			return err
		})
		return out, err
	}
	err := s.object(func(key string) error {
		var err error
		switch key {
		case "type":
			kj.Type, err = s.str(64, "the kernel type")
			err = within("kernel.type", err)
		case "variance", "lengthscale":
			var v float64
			if v, err = s.number(); err != nil {
				err = within("kernel."+key, err)
			} else {
				if key == "variance" {
					kj.Variance = &v
				} else {
					kj.Lengthscale = &v
				}
			}
		case "lengthscales":
			kj.Lengthscales, err = list(key)
			err = within("kernel."+key, err)
		case "variances":
			kj.Variances, err = list(key)
			err = within("kernel."+key, err)
		default:
			err = s.skip(0)
		}
		return err
	})
	return &kj, err
}

// kernel returns the kernel kj describes, on q inputs.
func (kj *kernelJSON) kernel(q int) (engine.Kernel, error) {
	var k engine.Kernel
	switch kj.Type {
	case "rbf":
		if kj.Variance == nil {
			return nil, fmt.Errorf("kernel.variance: missing")
		}
		if len(kj.Lengthscales) == 0 {
			return nil, fmt.Errorf("kernel.lengthscales: missing")
		}
		k = engine.NewRBF(*kj.Variance, kj.Lengthscales)
	case "linear":
		if len(kj.Variances) == 0 {
			return nil, fmt.Errorf("kernel.variances: missing")
		}
		k = engine.NewLinear(kj.Variances)
	case "rbfiso":
		if kj.Variance == nil || kj.Lengthscale == nil {
			return nil, fmt.Errorf("kernel.variance or kernel.lengthscale: missing")
		}
		k = engine.NewRBFIso(*kj.Variance, *kj.Lengthscale, q)
	default:
		return nil, fmt.Errorf("kernel.type: %q is not rbf, rbfiso or linear", kj.Type)
	}
	if k.InputDim() != q {
		return nil, fmt.Errorf("kernel: %d lengthscales/variances but inducing_inputs has %d columns", k.InputDim(), q)
	}
	return k, nil
}

// WriteModel writes m (and extra fields) as an indented JSON model file.
// The output is deterministic: the same model gives the same bytes.
// Arrays of more than encodeAbove values are written compactly; when
// extra holds the data's "normalization" and the data are integers in
// their original units that re-normalise bit for bit, they are stored as
// such integers.
func WriteModel(w io.Writer, m *engine.Model, extra map[string]json.RawMessage) error {
	return Write(w, &File{Model: m, Extra: extra})
}

// Write writes mf as a JSON model file: its model, its data with
// mf.Info, and mf.Extra's fields. The normalization field is mf.Extra's
// when it has one, else mf.NormX and mf.NormY's when set.
func Write(w io.Writer, mf *File) error {
	m, extra := mf.Model, mf.Extra
	if _, ok := extra["normalization"]; !ok && mf.NormX.Mean != nil && mf.NormY.Mean != nil {
		extra = maps.Clone(extra)
		if extra == nil {
			extra = map[string]json.RawMessage{}
		}
		extra["normalization"] = NormalizationJSON(mf.NormX, mf.NormY)
	}
	out := map[string]any{}
	for k, v := range extra {
		out[k] = v
	}
	_, q := m.X.Dims()
	_, d := m.Y.Dims()
	nx, ny, err := readNormalization(extra["normalization"], q, d)
	if err != nil {
		// Written as given (Read will say what is wrong), with the
		// data as they are: no original units without a normalisation.
		nx, ny = dataset.Normalizer{}, dataset.Normalizer{}
	}
	out["jitter"] = m.Jitter
	data := dataToJSON(m.X, m.Y, nx, ny, mf.Data)
	for _, a := range []any{data.X, data.Y} {
		if a, ok := a.(*arrayJSON); ok && a.DataSet != nil {
			a.DataSet.Path = mf.DataPath
		}
	}
	in := mf.Info
	data.XUnit, data.YUnit = in.XUnit, in.YUnit
	if readableNames(in.XNames, q) {
		data.XNames = in.XNames
	}
	if readableNames(in.YNames, d) {
		data.YNames = in.YNames
	}
	if in.Shape != [2]int{} {
		data.Shape = &in.Shape
	}
	if in.Range[1] > in.Range[0] {
		data.Range = &in.Range
	}
	out["data"] = data
	var layers []layerJSON
	for _, l := range m.Layers {
		layers = append(layers, layerToJSON(l))
	}
	out["layers"] = layers
	// The data's compact arrays are written as streams: their Base64 in
	// the encoded file is a token, replaced as the file is written by
	// the compressed values. A million rows of 31 columns held as raw
	// bytes, compressed, in base64 and in the encoder's buffers took
	// four times the data's 248 MB.
	var streams []*arrayJSON
	var tokens []string
	nonce := rand.Uint64()
	for _, a := range []any{data.X, data.Y} {
		if a, ok := a.(*arrayJSON); ok && a.raw != nil {
			tok := fmt.Sprintf("@@stream-%016x-%d@@", nonce, len(streams))
			a.Base64 = tok
			streams, tokens = append(streams, a), append(tokens, tok)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("writing model: %w", err)
	}
	rest := buf.Bytes()
	for i, a := range streams {
		at := bytes.Index(rest, []byte(tokens[i]))
		if at < 0 {
			return fmt.Errorf("writing model: the data's array %d was not encoded", i+1)
		}
		if _, err := w.Write(rest[:at]); err != nil {
			return err
		}
		if err := writeZlibBase64(w, a.raw); err != nil {
			return err
		}
		rest = rest[at+len(tokens[i]):]
	}
	_, err = w.Write(rest)
	return err
}

// readableNames reports whether names, one per column of cols, are within
// what the reader takes: a data set whose names are not is written without
// them rather than as a file that cannot be read back.
func readableNames(names []string, cols int) bool {
	if len(names) != cols {
		return false
	}
	for _, n := range names {
		if len(n) > maxNameBytes || !utf8.ValidString(n) { // JSON would replace bad bytes, growing the name
			return false
		}
	}
	return true
}

func layerToJSON(l *engine.Layer) layerJSON {
	lj := layerJSON{NoiseVariance: l.NoiseVariance, InducingInputs: matrixToJSON(l.InducingInputs), QMu: matrixToJSON(l.QMu)}
	switch k := l.Kernel.(type) {
	case *engine.RBF:
		v := k.Variance
		lj.Kernel = kernelJSON{Type: "rbf", Variance: &v, Lengthscales: append([]float64(nil), k.Lengthscales...)}
	case *engine.Linear:
		lj.Kernel = kernelJSON{Type: "linear", Variances: append([]float64(nil), k.Variances...)}
	case *engine.RBFIso:
		v, l := k.Variance(), k.Lengthscale()
		lj.Kernel = kernelJSON{Type: "rbfiso", Variance: &v, Lengthscale: &l}
	}
	mz, _, d := l.Dims()
	if d*mz*(mz+1)/2 > encodeAbove {
		lj.QSqrt = lowerToJSON(l.QSqrt, mz)
		return lj
	}
	rows := make([][][]float64, len(l.QSqrt))
	for k, s := range l.QSqrt {
		rows[k] = lowerRows(s)
	}
	lj.QSqrt = rows
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

// GradientOf returns g, a gradient of model m, in the model file's field
// names.
func GradientOf(g *engine.Gradient, m *engine.Model) GradientJSON {
	var out GradientJSON
	for i, lg := range g.Layers {
		kj := map[string]any{}
		switch m.Layers[i].Kernel.(type) {
		case *engine.RBF:
			kj["variance"] = lg.Kernel[0]
			kj["lengthscales"] = lg.Kernel[1:]
		case *engine.Linear:
			kj["variances"] = lg.Kernel
		case *engine.RBFIso:
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
