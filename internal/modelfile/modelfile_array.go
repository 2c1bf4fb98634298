package modelfile

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strings"

	"dgpviz/internal/dataset"

	"gonum.org/v1/gonum/mat"
)

// Arrays in model files: rows of JSON numbers, or compact (arrayJSON).

// axisLimit is the largest extent of one axis of an array and the error
// that says it was exceeded.
type axisLimit struct {
	max int
	err func() error
}

// arraySpec says what array a field holds: a matrix (rank 2) or a stack
// of square matrices (rank 3, q_sqrt: one lower triangle each), the
// limits of its axes, and whether it is data (which may be stored in
// original units, and data.Y as the same as data.X).
type arraySpec struct {
	name   string
	rank   int
	data   bool
	limits [3]axisLimit
}

// array is an array as read: row-major values, or for rank 3 the full
// square matrices, and the shape.
type array struct {
	vals     []float64
	mats     [][]float64
	shape    [3]int
	original bool   // data in original units
	sameAs   string // data.Y: "X"
}

// dtypes are the element types of compact arrays, by name, with their
// size in bytes.
var dtypes = map[string]int{"float64": 8, "int32": 4, "int16": 2, "uint16": 2, "int8": 1, "uint8": 1}

// grow returns buf with room for n more values, charged when it must grow.
func (mr *modelReader) grow(buf []float64, n int) ([]float64, error) {
	if len(buf)+n <= cap(buf) {
		return buf[:len(buf)+n], nil
	}
	// Doubling, then by a quarter past 1 MiB (as append does): the old
	// and the new slice are held together while copying.
	nc := 2 * cap(buf)
	if cap(buf) > 1<<17 {
		nc = cap(buf) + cap(buf)/4
	}
	nc = max(nc, len(buf)+n, 256)
	if err := mr.charge(8 * int64(nc)); err != nil {
		return buf, err
	}
	nb := make([]float64, len(buf)+n, nc)
	copy(nb, buf)
	mr.release(8 * int64(cap(buf)))
	return nb, nil
}

// array reads the array of field spec.name in either form.
func (mr *modelReader) array(spec arraySpec) (*array, error) {
	c, err := mr.s.peek()
	if err != nil {
		return nil, err
	}
	switch {
	case c == '{':
		return mr.compact(spec)
	case c == '[' && spec.rank == 2:
		return mr.rows(spec)
	case c == '[':
		return mr.lowerStack(spec)
	}
	return nil, within(spec.name, mr.s.mismatch("an array of rows or a compact array {…}", c))
}

// rows reads a matrix written as an array of rows of numbers, checking the
// limits as the rows come.
func (mr *modelReader) rows(spec arraySpec) (*array, error) {
	s := mr.s
	var buf chunks
	defer mr.release(buf.held)
	rows, cols := 0, -1
	err := s.array(func(i int) error {
		if i >= spec.limits[0].max {
			return spec.limits[0].err()
		}
		n := 0
		err := s.array(func(j int) error {
			if cols >= 0 && j >= cols {
				return fmt.Errorf("more entries than row 0's %d", cols)
			}
			if j >= spec.limits[1].max {
				return spec.limits[1].err()
			}
			v, err := s.number()
			if err != nil {
				return within(fmt.Sprintf("%s[%d][%d]", spec.name, i, j), err)
			}
			n++
			return buf.add(mr, v)
		})
		if err != nil {
			return within(fmt.Sprintf("%s[%d]", spec.name, i), err)
		}
		switch {
		case cols < 0 && n == 0:
			return placef("%s[0]: empty row", spec.name)
		case cols < 0:
			cols = n
		case n != cols:
			return placef("%s[%d]: %d entries, but row 0 has %d", spec.name, i, n, cols)
		}
		rows++
		return nil
	})
	if err != nil {
		return nil, within(spec.name, err)
	}
	if rows == 0 {
		return nil, placef("%s: missing or empty", spec.name)
	}
	vals, err := mr.floats(buf.n)
	if err != nil {
		return nil, err
	}
	buf.copyTo(vals)
	return &array{vals: vals, shape: [3]int{rows, cols}}, nil
}

// chunks collects values of an array whose length is not known before its
// end, in chunks that are never copied while it grows: a growing slice
// would hold the old and the new copy at once, and leave the old ones to
// the garbage collector.
type chunks struct {
	c    [][]float64
	n    int   // values
	held int64 // bytes charged
}

const chunkLen = 1 << 13 // 64 KiB of float64s

func (c *chunks) add(mr *modelReader, v float64) error {
	last := len(c.c) - 1
	if last < 0 || len(c.c[last]) == cap(c.c[last]) {
		size := min(chunkLen, max(256, c.n))
		if err := mr.charge(8 * int64(size)); err != nil {
			return err
		}
		c.held += 8 * int64(size)
		c.c = append(c.c, make([]float64, 0, size))
		last++
	}
	c.c[last] = append(c.c[last], v)
	c.n++
	return nil
}

func (c *chunks) copyTo(dst []float64) {
	at := 0
	for _, ch := range c.c {
		at += copy(dst[at:], ch)
	}
}

// lowerStack reads q_sqrt written as an array of square matrices, each an
// array of rows of M entries or of the lower triangle's r+1 (row r).
func (mr *modelReader) lowerStack(spec arraySpec) (*array, error) {
	s := mr.s
	var (
		mats    [][]float64 // the full matrices, row-major
		scratch []float64   // one matrix's rows as written
		lens    []int
		mz      = -1
		count   int
	)
	err := s.array(func(k int) error {
		if k >= spec.limits[0].max {
			return spec.limits[0].err()
		}
		scratch, lens = scratch[:0], lens[:0]
		err := s.array(func(r int) error {
			if r >= spec.limits[1].max || (mz >= 0 && r >= mz) {
				if mz >= 0 {
					return placef("%s[%d]: more than %d rows", spec.name, k, mz)
				}
				return spec.limits[1].err()
			}
			n := 0
			lim := spec.limits[2].max
			if mz >= 0 {
				lim = min(lim, mz)
			}
			err := s.array(func(c int) error {
				if c >= lim {
					return fmt.Errorf("more than %d entries", lim)
				}
				v, err := s.number()
				if err != nil {
					return within(fmt.Sprintf("%s[%d][%d][%d]", spec.name, k, r, c), err)
				}
				scratch, err = mr.grow(scratch, 1)
				scratch[len(scratch)-1] = v
				n++
				return err
			})
			lens = append(lens, n)
			return within(fmt.Sprintf("%s[%d][%d]", spec.name, k, r), err)
		})
		if err != nil {
			return within(fmt.Sprintf("%s[%d]", spec.name, k), err)
		}
		if mz < 0 {
			mz = len(lens)
		}
		if len(lens) != mz || mz == 0 {
			return placef("%s[%d]: %d rows, want %d", spec.name, k, len(lens), mz)
		}
		full, err := mr.floats(mz * mz)
		if err != nil {
			return err
		}
		mats = append(mats, full)
		from := 0
		for r, n := range lens {
			if n != mz && n != r+1 {
				return placef("%s[%d][%d]: %d entries, want %d (or %d, the lower triangle)", spec.name, k, r, n, mz, r+1)
			}
			copy(full[r*mz:r*mz+r+1], scratch[from:from+r+1])
			clear(full[r*mz+r+1 : (r+1)*mz])
			from += n
		}
		count++
		return nil
	})
	mr.release(8 * int64(cap(scratch)))
	if err != nil {
		return nil, within(spec.name, err)
	}
	if count == 0 {
		return nil, placef("%s: missing or empty", spec.name)
	}
	return &array{mats: mats, shape: [3]int{count, mz, mz}}, nil
}

// compact reads an arrayJSON object. Its shape is checked against the
// limits as soon as it is read, and bounds the base64 text that may
// follow; the binary is decoded once the object is complete.
func (mr *modelReader) compact(spec arraySpec) (*array, error) {
	s := mr.s
	var (
		shape                                     []int
		dtype, units, triangle, compression, same string
		b64                                       []byte
		haveShape, haveDtype, haveB64             bool
		ref                                       *dataSetRef
	)
	field := func(key string) string { return spec.name + "." + key }
	err := s.object(func(key string) error {
		var err error
		switch key {
		case "same_as":
			same, err = s.str(16, field(key))
		case "dtype":
			dtype, err = s.str(16, field(key))
			haveDtype = true
		case "units":
			units, err = s.str(16, field(key))
		case "triangle":
			triangle, err = s.str(16, field(key))
		case "compression":
			compression, err = s.str(16, field(key))
		case "shape":
			haveShape = true
			err = s.array(func(i int) error {
				if i >= spec.rank {
					return fmt.Errorf("more than %d extents", spec.rank)
				}
				v, err := s.number()
				if err != nil {
					return within(fmt.Sprintf("%s[%d]", field(key), i), err)
				}
				if v != math.Trunc(v) || v < 1 {
					return placef("%s[%d]: %v is not a whole number ≥ 1", field(key), i, v)
				}
				if v > float64(spec.limits[i].max) {
					return spec.limits[i].err()
				}
				shape = append(shape, int(v))
				return nil
			})
		case "data_set":
			ref, err = mr.dataSetRef(field(key))
		case "base64":
			maxLen := MaxBytes
			if size, ok := dtypes[dtype]; ok && len(shape) == spec.rank {
				maxLen = base64.StdEncoding.EncodedLen(maxEncoded(size * product(shape)))
			}
			haveB64 = true
			b64, err = s.strBytes(nil, maxLen, field(key), mr.charge)
		default:
			err = s.skip(0)
		}
		return within(field(key), err)
	})
	defer mr.release(int64(len(b64)))
	if err != nil {
		return nil, within(spec.name, err)
	}
	if same != "" {
		if !spec.data || haveShape || haveDtype || haveB64 {
			return nil, placef(`%s: same_as stands alone, and only in data.Y`, spec.name)
		}
		return &array{sameAs: same}, nil
	}
	if ref != nil {
		switch {
		case !spec.data:
			return nil, placef("%s: only data may refer to a data set", spec.name)
		case haveDtype || haveB64 || compression != "" || triangle != "":
			return nil, placef("%s: an array that refers to a data set holds no values of its own", spec.name)
		case units != "original":
			return nil, placef(`%s: a data set's values are in original units: want "units": "original"`, spec.name)
		case !haveShape || len(shape) != spec.rank:
			return nil, placef("%s: want %d extents, found %d", field("shape"), spec.rank, len(shape))
		}
		return mr.fromDataSet(spec.name, ref, shape[0], shape[1])
	}
	size, ok := dtypes[dtype]
	switch {
	case !haveShape || len(shape) != spec.rank:
		return nil, placef("%s: want %d extents, found %d", field("shape"), spec.rank, len(shape))
	case !ok:
		return nil, placef("%s: %q is not float64, int32, int16, uint16, int8 or uint8", field("dtype"), dtype)
	case units != "" && (units != "original" || !spec.data):
		return nil, placef(`%s: %q: only data may be "original"`, field("units"), units)
	case triangle != "" && (triangle != "lower" || spec.rank != 3):
		return nil, placef(`%s: %q: only q_sqrt may be "lower"`, field("triangle"), triangle)
	case spec.rank == 3 && shape[1] != shape[2]:
		return nil, placef("%s: %d×%d matrices, want square ones", field("shape"), shape[1], shape[2])
	case compression != "" && compression != "zlib":
		return nil, placef(`%s: %q: want "zlib" or none`, field("compression"), compression)
	}
	n := product(shape) // values stored
	if triangle == "lower" {
		n = shape[0] * shape[1] * (shape[1] + 1) / 2
	}
	if want := base64.StdEncoding.EncodedLen(n * size); compression == "" && len(b64) != want {
		return nil, placef("%s: %d characters, want %d for shape %v of %s", field("base64"), len(b64), want, shape, dtype)
	}
	raw, err := mr.binary(b64, compression, n*size, field("base64"))
	defer mr.release(int64(cap(raw)))
	if err != nil {
		return nil, err
	}
	vals, err := mr.floats(product(shape))
	if err != nil {
		return nil, err
	}
	if triangle == "lower" {
		if err := mr.charge(8 * int64(n)); err != nil {
			return nil, err
		}
		defer mr.release(8 * int64(n))
		tri := make([]float64, n)
		decodeValues(tri, raw, dtype)
		m := shape[1]
		for k, t := 0, 0; k < shape[0]; k++ {
			for r := range m {
				copy(vals[(k*m+r)*m:], tri[t:t+r+1])
				t += r + 1
			}
		}
	} else {
		decodeValues(vals, raw, dtype)
	}
	a := &array{vals: vals, original: units == "original"}
	copy(a.shape[:], shape)
	if spec.rank == 3 {
		a.vals = nil
		for k := range shape[0] {
			m2 := shape[1] * shape[1]
			a.mats = append(a.mats, vals[k*m2:(k+1)*m2:(k+1)*m2])
		}
	}
	return a, nil
}

// dataSetRef reads a data array's data_set object.
func (mr *modelReader) dataSetRef(name string) (*dataSetRef, error) {
	s := mr.s
	var ref dataSetRef
	err := s.object(func(key string) error {
		var err error
		switch key {
		case "name":
			ref.Name, err = s.str(64, name+".name")
		case "file":
			ref.File, err = s.str(256, name+".file")
		case "path":
			ref.Path, err = s.str(maxPathBytes, name+".path")
		case "sha256":
			ref.SHA256, err = s.str(64, name+".sha256")
		case "columns":
			ref.Columns, err = s.str(16, name+".columns")
		default:
			err = s.skip(0)
		}
		return err
	})
	return &ref, err
}

// fromDataSet returns the columns of the public data set that ref names,
// rows × cols values in original units. The data set is loaded once per
// file (ReadOptions.LoadDataSet), and its memory charged: the file and its
// inputs and outputs, about twice the values.
func (mr *modelReader) fromDataSet(name string, ref *dataSetRef, rows, cols int) (*array, error) {
	r, ok := dataset.RemoteNamed(ref.Name)
	switch {
	case !ok:
		var names []string
		for _, k := range dataset.Remotes {
			names = append(names, k.Name)
		}
		return nil, placef("%s.data_set: %q is not a public data set dgpviz knows (%s)", name, ref.Name, strings.Join(names, ", "))
	case ref.SHA256 != r.SHA256:
		return nil, placef("%s.data_set: sha256 %q is not the %s data's (%s): the model was fitted to other data", name, ref.SHA256, r.Title, r.SHA256)
	case ref.Columns != "inputs" && ref.Columns != "outputs":
		return nil, placef(`%s.data_set.columns: %q: want "inputs" or "outputs"`, name, ref.Columns)
	}
	if mr.dataSet == nil {
		if err := mr.charge(2 * 8 * int64(rows) * int64(cols)); err != nil {
			return nil, err
		}
		ds, err := mr.loadDataSet(r, ref.Path)
		if err != nil {
			return nil, placef("%s: %v", name, err)
		}
		mr.dataSet, mr.dataPath = ds, ref.Path
	} else if mr.dataSet.Source.Name != r.Name {
		return nil, placef("%s.data_set: %q, but the data already refer to %q", name, r.Name, mr.dataSet.Source.Name)
	}
	m := mr.dataSet.X
	if ref.Columns == "outputs" {
		m = mr.dataSet.Y
	}
	if r0, c0 := m.Dims(); r0 != rows || c0 != cols {
		return nil, placef("%s: the %s data set's %s are %d × %d, the file says %d × %d", name, r.Title, ref.Columns, r0, c0, rows, cols)
	}
	vals, err := mr.floats(rows * cols)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		copy(vals[i*cols:], m.RawRowView(i))
	}
	return &array{vals: vals, shape: [3]int{rows, cols}, original: true}, nil
}

// maxPathBytes bounds a data file's path in a model file.
const maxPathBytes = 4096

// loadDataSet loads the public data set r, whose file was at path when
// the model was fitted: from path when the options allow (OpenDataPaths),
// then by LoadDataSet, taking the first whose checksum is r's. Its error
// says where it looked and how to get the data.
func (mr *modelReader) loadDataSet(r dataset.Remote, path string) (*dataset.Dataset, error) {
	whose := "the model's data are the " + r.Title + " data set's"
	if path != "" && mr.opt.OpenDataPaths {
		ds, err := dataset.Load(r.Name + ":" + path)
		switch {
		case err == nil && ds.Source != nil && ds.Source.SHA256 == r.SHA256:
			return ds, nil
		case err == nil:
			whose += fmt.Sprintf("; %s, where it was fitted, holds another file (another sha256)", path)
		case errors.Is(err, fs.ErrNotExist):
			whose += fmt.Sprintf("; %s, where it was fitted, is not there", path)
		default:
			whose += fmt.Sprintf("; %s, where it was fitted: %v", path, err)
		}
	}
	ds, err := mr.opt.LoadDataSet(r.Name)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s; %v", whose, err)
	case ds.Source == nil || ds.Source.SHA256 != r.SHA256:
		return nil, fmt.Errorf("%s, and the file on this machine is not that one (another checksum): get it again with: go run ./cmd/viz data get %s", whose, r.Name)
	}
	return ds, nil
}

// maxEncoded bounds the length of n bytes once compressed: deflate's
// stored blocks add 5 bytes to every 65,535, zlib 6 bytes in all.
func maxEncoded(n int) int { return n + n/1000 + 64 }

// binary returns the n bytes that b64 encodes (compressed with zlib when
// compression says so), charged before they are allocated. A stream that
// holds more or fewer than n bytes, or fails its checksum, is an error.
func (mr *modelReader) binary(b64 []byte, compression string, n int, name string) ([]byte, error) {
	// Decode needs room for whole quanta: up to 2 bytes past the values.
	decLen := base64.StdEncoding.DecodedLen(len(b64))
	if err := mr.charge(int64(decLen)); err != nil {
		return nil, err
	}
	dec := make([]byte, decLen)
	k, err := base64.StdEncoding.Decode(dec, b64)
	if err != nil || (compression == "" && k != n) {
		return dec, placef("%s: not valid base64", name)
	}
	if compression == "" {
		return dec[:n], nil
	}
	defer mr.release(int64(decLen))
	if err := mr.charge(int64(n)); err != nil {
		return nil, err
	}
	raw := make([]byte, n)
	zr, err := zlib.NewReader(bytes.NewReader(dec[:k]))
	if err == nil {
		_, err = io.ReadFull(zr, raw)
	}
	if err == nil {
		// The end of the stream checks its checksum; a byte more is too many.
		var one [1]byte
		if m, e := zr.Read(one[:]); m != 0 {
			err = fmt.Errorf("more than %d bytes", n)
		} else if e != io.EOF {
			err = e
		}
	}
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			err = fmt.Errorf("fewer than %d bytes", n)
		}
		return raw, placef("%s: not valid zlib data for its shape (%v)", name, err)
	}
	return raw, nil
}

func product(shape []int) int {
	n := 1
	for _, v := range shape {
		n *= v
	}
	return n
}

// decodeValues converts little-endian binary of dtype to float64s.
func decodeValues(dst []float64, raw []byte, dtype string) {
	le := binary.LittleEndian
	for i := range dst {
		switch dtype {
		case "float64":
			dst[i] = math.Float64frombits(le.Uint64(raw[8*i:]))
		case "int32":
			dst[i] = float64(int32(le.Uint32(raw[4*i:])))
		case "int16":
			dst[i] = float64(int16(le.Uint16(raw[2*i:])))
		case "uint16":
			dst[i] = float64(le.Uint16(raw[2*i:]))
		case "int8":
			dst[i] = float64(int8(raw[i]))
		case "uint8":
			dst[i] = float64(raw[i])
		}
	}
}

// float64JSON is vals in compact form.
func float64JSON(vals []float64, shape ...int) *arrayJSON {
	raw := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(v))
	}
	return &arrayJSON{Shape: shape, Dtype: "float64", Compression: "zlib", Base64: zlibBase64(raw)}
}

// zlibBase64 is raw compressed with zlib, in base64. Compression finds
// what repeats: the last layer's q_sqrt matrices of an autoencoder are the
// same for every output (560 × 2.7 KiB for the Frey faces, 2.4 KiB in all
// once compressed).
func zlibBase64(raw []byte) string {
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	zw.Write(raw) // cannot fail: a bytes.Buffer
	zw.Close()
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// matrixToJSON is a model matrix in the file's form: rows of numbers up to
// encodeAbove values, compact beyond.
func matrixToJSON(a *mat.Dense) any {
	r, c := a.Dims()
	if r*c <= encodeAbove {
		return MatrixRows(a)
	}
	vals := make([]float64, 0, r*c)
	for i := range r {
		vals = append(vals, a.RawRowView(i)...)
	}
	return float64JSON(vals, r, c)
}

// lowerToJSON is q_sqrt in compact form: the lower triangles, row by row.
func lowerToJSON(qs []*mat.Dense, mz int) *arrayJSON {
	vals := make([]float64, 0, len(qs)*mz*(mz+1)/2)
	for _, s := range qs {
		for r := range mz {
			vals = append(vals, s.RawRowView(r)[:r+1]...)
		}
	}
	a := float64JSON(vals, len(qs), mz, mz)
	a.Triangle = "lower"
	return a
}

// dataToJSON is the data in the file's form: like matrixToJSON, but
// compact data that are integers in their original units (nx, ny) which
// normalise back bit for bit are stored as such integers, and data.Y that
// is stored exactly as data.X is stored once.
func dataToJSON(x, y *mat.Dense, nx, ny dataset.Normalizer, src *dataset.Dataset) dataJSON {
	xj, yj := dataMatrixToJSON(x, nx, src), dataMatrixToJSON(y, ny, src)
	xa, okx := xj.(*arrayJSON)
	ya, oky := yj.(*arrayJSON)
	if okx && oky && slices.Equal(xa.Shape, ya.Shape) && xa.Dtype == ya.Dtype && xa.Units == ya.Units && xa.Compression == ya.Compression && xa.Base64 == ya.Base64 && bytes.Equal(xa.raw, ya.raw) &&
		(xa.DataSet == nil) == (ya.DataSet == nil) && (xa.DataSet == nil || *xa.DataSet == *ya.DataSet) {
		yj = &arrayJSON{SameAs: "X"}
	}
	return dataJSON{X: xj, Y: yj}
}

func dataMatrixToJSON(a *mat.Dense, nz dataset.Normalizer, src *dataset.Dataset) any {
	r, c := a.Dims()
	if r*c <= encodeAbove {
		return MatrixRows(a)
	}
	if nz.Mean == nil { // no normalisation to store original units with
		return float64Stream(a)
	}
	if ref := refer(a, nz, src); ref != nil {
		return &arrayJSON{Shape: []int{r, c}, Units: "original", DataSet: ref}
	}
	ints, dtype, ok := integerOriginals(a, nz)
	if !ok {
		return float64Stream(a)
	}
	size := dtypes[dtype]
	raw := make([]byte, size*len(ints))
	le := binary.LittleEndian
	for i, v := range ints {
		switch size {
		case 1:
			raw[i] = byte(v)
		case 2:
			le.PutUint16(raw[2*i:], uint16(v))
		case 4:
			le.PutUint32(raw[4*i:], uint32(v))
		}
	}
	return &arrayJSON{Shape: []int{r, c}, Dtype: dtype, Units: "original", Compression: "zlib", raw: raw}
}

// float64Stream is the data matrix a in compact form, its Base64 left to
// be streamed from raw as the file is written (writeStreamed): the data
// of a million rows are hundreds of megabytes in each of their forms.
func float64Stream(a *mat.Dense) *arrayJSON {
	r, c := a.Dims()
	raw := make([]byte, 0, 8*r*c)
	for i := range r {
		for _, v := range a.RawRowView(i) {
			raw = binary.LittleEndian.AppendUint64(raw, math.Float64bits(v))
		}
	}
	return &arrayJSON{Shape: []int{r, c}, Dtype: "float64", Compression: "zlib", raw: raw}
}

// writeZlibBase64 writes what zlibBase64(raw) returns to w, as a stream.
func writeZlibBase64(w io.Writer, raw []byte) error {
	b64 := base64.NewEncoder(base64.StdEncoding, w)
	zw := zlib.NewWriter(b64)
	if _, err := zw.Write(raw); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return b64.Close()
}

// refer returns the reference to src's inputs or outputs when src is a
// public data set and they are a's values in original units: normalised
// with nz as the reader does it, a bit for bit.
func refer(a *mat.Dense, nz dataset.Normalizer, src *dataset.Dataset) *dataSetRef {
	if src == nil || src.Source == nil {
		return nil
	}
	for _, part := range []struct {
		columns string
		m       *mat.Dense
	}{{"inputs", src.X}, {"outputs", src.Y}} {
		if NormalisesTo(part.m, nz, a) {
			rm := src.Source
			return &dataSetRef{Name: rm.Name, File: rm.File, SHA256: rm.SHA256, Columns: part.columns}
		}
	}
	return nil
}

// NormalisesTo reports whether the originals orig, normalised with nz as
// the reader and dataset.Normalizer.Apply do it, are a bit for bit (and
// of a's shape, whatever nz's width: orig may come from elsewhere).
func NormalisesTo(orig *mat.Dense, nz dataset.Normalizer, a *mat.Dense) bool {
	r, c := a.Dims()
	if or, oc := orig.Dims(); or != r || oc != c || len(nz.Mean) != c || len(nz.Scale) != c {
		return false
	}
	for i := range r {
		for j, v := range orig.RawRowView(i) {
			if math.Float64bits((v-nz.Mean[j])/nz.Scale[j]) != math.Float64bits(a.At(i, j)) {
				return false
			}
		}
	}
	return true
}

// integerOriginals returns a's values in original units (value·scale +
// mean) when every one is an integer k within int32 whose normalisation
// (k − mean)/scale, computed as dataset.Normalizer.Apply and Read
// compute it, is the value bit for bit; with the smallest dtype that
// holds them.
func integerOriginals(a *mat.Dense, nz dataset.Normalizer) ([]int64, string, bool) {
	r, c := a.Dims()
	out := make([]int64, 0, r*c)
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range r {
		for j, v := range a.RawRowView(i) {
			k := math.Round(v*nz.Scale[j] + nz.Mean[j])
			if !(k >= math.MinInt32 && k <= math.MaxInt32) {
				return nil, "", false
			}
			ki := int64(k) // and back: +0 where Round gave −0, as the reader has it
			if math.Float64bits((float64(ki)-nz.Mean[j])/nz.Scale[j]) != math.Float64bits(v) {
				return nil, "", false
			}
			out = append(out, ki)
			lo, hi = min(lo, ki), max(hi, ki)
		}
	}
	switch {
	case lo >= 0 && hi <= math.MaxUint8:
		return out, "uint8", true
	case lo >= math.MinInt8 && hi <= math.MaxInt8:
		return out, "int8", true
	case lo >= 0 && hi <= math.MaxUint16:
		return out, "uint16", true
	case lo >= math.MinInt16 && hi <= math.MaxInt16:
		return out, "int16", true
	}
	return out, "int32", true
}
