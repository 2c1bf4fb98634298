package dataset

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"unicode/utf8"

	"gonum.org/v1/gonum/mat"
)

// MATMatrix is one numeric variable of a MAT-file: a real Rows×Cols matrix
// whose elements are held in column-major order, as MATLAB stores them.
type MATMatrix struct {
	Name       string
	Rows, Cols int
	// Class is the MATLAB class of the variable ("uint8", "double", ...);
	// every element is converted to float64 exactly (int64 and uint64
	// beyond 2⁵³ are rounded).
	Class string
	Data  []float64 // len Rows·Cols, column-major
}

// At returns the element in row i and column j.
func (m *MATMatrix) At(i, j int) float64 { return m.Data[j*m.Rows+i] }

// Dense returns the matrix as a *mat.Dense, or nil when it is empty.
func (m *MATMatrix) Dense() *mat.Dense {
	if m.Rows == 0 || m.Cols == 0 {
		return nil
	}
	d := mat.NewDense(m.Rows, m.Cols, nil)
	for j := range m.Cols {
		for i := range m.Rows {
			d.Set(i, j, m.At(i, j))
		}
	}
	return d
}

// MAT-file v5 data types (MATLAB, MAT-File Format, 2019, table 1-1).
const (
	miINT8       = 1
	miUINT8      = 2
	miINT16      = 3
	miUINT16     = 4
	miINT32      = 5
	miUINT32     = 6
	miSINGLE     = 7
	miDOUBLE     = 9
	miINT64      = 12
	miUINT64     = 13
	miMATRIX     = 14
	miCOMPRESSED = 15
)

// MATLAB array classes (MAT-File Format, table 1-3), by number.
var matClasses = [...]string{
	1: "cell", 2: "struct", 3: "object", 4: "char", 5: "sparse",
	6: "double", 7: "single", 8: "int8", 9: "uint8", 10: "int16",
	11: "uint16", 12: "int32", 13: "uint32", 14: "int64", 15: "uint64",
}

// matElemSize is the size in bytes of one value of each numeric data type.
var matElemSize = map[uint32]int{
	miINT8: 1, miUINT8: 1, miINT16: 2, miUINT16: 2, miINT32: 4, miUINT32: 4,
	miSINGLE: 4, miDOUBLE: 8, miINT64: 8, miUINT64: 8,
}

// matMagic starts every MAT-file of version 5 (MAT-File Format, 2019, p. 1-6).
const matMagic = "MATLAB 5.0 MAT-file"

// looksLikeText reports whether b's first 512 bytes are printable UTF-8
// text (or white space): a file given as a MAT-file that is not one.
func looksLikeText(b []byte) bool {
	head := b[:min(len(b), 512)]
	for len(head) > 0 {
		r, n := utf8.DecodeRune(head)
		if r == utf8.RuneError && n <= 1 && len(head) >= utf8.UTFMax {
			return false
		}
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' {
			return false
		}
		head = head[n:]
	}
	return true
}

const (
	matHeaderSize = 128
	// MaxMATElements is the largest number of elements a MAT-file
	// variable may hold.
	MaxMATElements = 1 << 24
)

// ReadMAT reads the numeric matrices of a MATLAB MAT-file, version 5
// (also written by MATLAB 6 and 7 with -v6 or without compression).
//
// Supported: little-endian files holding real, non-sparse, 2-D matrices
// of class double, single or any integer class, with their values stored
// in any numeric data type. Everything else is reported as an error that
// says what is unsupported rather than misread: compressed variables
// (saved without -v6), v7.3 (HDF5) and v4 files, big-endian files, complex,
// sparse, char, cell, struct and object arrays, and arrays of more than
// two dimensions. The input is limited to MaxFileSize bytes and each
// variable to MaxMATElements elements.
func ReadMAT(r io.Reader) ([]MATMatrix, error) {
	b, err := io.ReadAll(newLimitReader(r, maxFileSize))
	if errors.Is(err, errTooLarge) {
		return nil, sizeError("MAT-file", maxFileSize)
	}
	if err != nil {
		return nil, fmt.Errorf("MAT-file: %w", err)
	}
	return parseMAT(b)
}

// parseMAT parses a whole MAT-file held in b.
func parseMAT(b []byte) ([]MATMatrix, error) {
	if len(b) >= 10 && string(b[:10]) == "MATLAB 7.3" {
		return nil, errors.New("MAT-file: version 7.3 (HDF5) files are not supported; save with -v6")
	}
	if len(b) > 0 && !bytes.HasPrefix(b, []byte("MATLAB")) && looksLikeText(b) {
		return nil, errors.New(`MAT-file: this is text, not a MATLAB MAT-file (binary, starting "` + matMagic + `"); robot WiFi readings are read with robot:PATH, a CSV with csv:PATH`)
	}
	if len(b) < matHeaderSize {
		return nil, fmt.Errorf("MAT-file: %d bytes, shorter than the 128-byte header of a version 5 file", len(b))
	}
	if string(b[:6]) != "MATLAB" {
		return nil, errors.New(`MAT-file: no "MATLAB" text at the start: not a version 5 MAT-file (version 4 files are not supported)`)
	}
	switch string(b[126:128]) {
	case "IM":
	case "MI":
		return nil, errors.New("MAT-file: big-endian files are not supported")
	default:
		return nil, fmt.Errorf("MAT-file: endian indicator %q is neither \"IM\" nor \"MI\"", b[126:128])
	}
	if v := binary.LittleEndian.Uint16(b[124:126]); v != 0x0100 {
		return nil, fmt.Errorf("MAT-file: header version %#x, want 0x0100", v)
	}
	var out []MATMatrix
	p := matParser{b: b, off: matHeaderSize}
	for p.off < len(b) {
		start := p.off
		typ, data, err := p.element()
		if err != nil {
			return nil, fmt.Errorf("MAT-file: element at byte %d: %w", start, err)
		}
		switch typ {
		case miMATRIX:
			m, err := parseMATMatrix(data)
			if err != nil {
				return nil, fmt.Errorf("MAT-file: variable at byte %d: %w", start, err)
			}
			out = append(out, m)
		case miCOMPRESSED:
			return nil, fmt.Errorf("MAT-file: element at byte %d is compressed (miCOMPRESSED), which is not supported; save with -v6", start)
		default:
			return nil, fmt.Errorf("MAT-file: element at byte %d has data type %d, want a matrix (14)", start, typ)
		}
	}
	return out, nil
}

// matParser reads data elements from b starting at off.
type matParser struct {
	b   []byte
	off int
}

// element reads one data element (tag and data, either the full or the
// small format) and moves past its padding to the next 8-byte boundary.
func (p *matParser) element() (typ uint32, data []byte, err error) {
	rest := len(p.b) - p.off
	if rest < 8 {
		return 0, nil, fmt.Errorf("%d bytes left, too few for an 8-byte tag", rest)
	}
	w := binary.LittleEndian.Uint32(p.b[p.off:])
	if w>>16 != 0 { // small data element: type, size and up to 4 bytes in 8
		typ, n := w&0xffff, int(w>>16)
		if n > 4 {
			return 0, nil, fmt.Errorf("small element of %d bytes, more than 4", n)
		}
		data = p.b[p.off+4 : p.off+4+n]
		p.off += 8
		return typ, data, nil
	}
	typ = w
	n := uint64(binary.LittleEndian.Uint32(p.b[p.off+4:]))
	if n > uint64(rest-8) {
		return 0, nil, fmt.Errorf("data of %d bytes, but only %d bytes follow the tag", n, rest-8)
	}
	data = p.b[p.off+8 : p.off+8+int(n)]
	next := p.off + 8 + int(n)
	if typ != miCOMPRESSED { // compressed data is not padded
		next = p.off + 8 + int((n+7)&^7)
	}
	p.off = min(next, len(p.b))
	return typ, data, nil
}

// parseMATMatrix parses the data of an miMATRIX element.
func parseMATMatrix(b []byte) (MATMatrix, error) {
	var m MATMatrix
	if len(b) == 0 { // an empty matrix element: MATLAB writes these for []
		return m, nil
	}
	p := matParser{b: b}
	// Array flags: class in the low byte, complex bit 0x0800.
	typ, flags, err := p.element()
	if err != nil {
		return m, fmt.Errorf("array flags: %w", err)
	}
	if typ != miUINT32 || len(flags) != 8 {
		return m, fmt.Errorf("array flags of type %d and %d bytes, want type 6 and 8 bytes", typ, len(flags))
	}
	f := binary.LittleEndian.Uint32(flags)
	class := int(f & 0xff)
	if class == 0 || class >= len(matClasses) {
		return m, fmt.Errorf("unknown array class %d", class)
	}
	m.Class = matClasses[class]
	if class <= 5 {
		return m, fmt.Errorf("%s arrays are not supported, only numeric matrices", m.Class)
	}
	if f&0x0800 != 0 {
		return m, errors.New("complex matrices are not supported")
	}
	// Dimensions.
	typ, dims, err := p.element()
	if err != nil {
		return m, fmt.Errorf("dimensions: %w", err)
	}
	if typ != miINT32 || len(dims)%4 != 0 {
		return m, fmt.Errorf("dimensions of type %d and %d bytes, want type 5 and a multiple of 4", typ, len(dims))
	}
	if len(dims) != 8 {
		return m, fmt.Errorf("%d dimensions: only 2-D matrices are supported", len(dims)/4)
	}
	rows := int32(binary.LittleEndian.Uint32(dims))
	cols := int32(binary.LittleEndian.Uint32(dims[4:]))
	if rows < 0 || cols < 0 {
		return m, fmt.Errorf("negative dimensions %d×%d", rows, cols)
	}
	if int64(rows)*int64(cols) > MaxMATElements {
		return m, fmt.Errorf("%d×%d matrix: more elements than the limit %d", rows, cols, MaxMATElements)
	}
	m.Rows, m.Cols = int(rows), int(cols)
	// Name.
	typ, name, err := p.element()
	if err != nil {
		return m, fmt.Errorf("name: %w", err)
	}
	if typ != miINT8 {
		return m, fmt.Errorf("name of type %d, want 1", typ)
	}
	for _, c := range name {
		if c < 0x20 || c > 0x7e {
			return m, fmt.Errorf("name %q has a byte that is not printable ASCII", name)
		}
	}
	m.Name = string(name)
	// Real part.
	typ, re, err := p.element()
	if err != nil {
		return m, fmt.Errorf("variable %q: real part: %w", m.Name, err)
	}
	size, ok := matElemSize[typ]
	if !ok {
		return m, fmt.Errorf("variable %q: real part of data type %d, which is not numeric", m.Name, typ)
	}
	n := m.Rows * m.Cols
	if len(re) != n*size {
		return m, fmt.Errorf("variable %q: %d bytes of data for %d×%d elements of %d bytes", m.Name, len(re), m.Rows, m.Cols, size)
	}
	if p.off != len(b) {
		return m, fmt.Errorf("variable %q: %d unexpected bytes after the data", m.Name, len(b)-p.off)
	}
	m.Data = make([]float64, n)
	for i := range m.Data {
		v := matValue(typ, re[i*size:])
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return m, fmt.Errorf("variable %q: element %d is %v, not a finite number", m.Name, i+1, v)
		}
		m.Data[i] = v
	}
	return m, nil
}

// matValue decodes one little-endian value of numeric data type typ.
func matValue(typ uint32, b []byte) float64 {
	le := binary.LittleEndian
	switch typ {
	case miINT8:
		return float64(int8(b[0]))
	case miUINT8:
		return float64(b[0])
	case miINT16:
		return float64(int16(le.Uint16(b)))
	case miUINT16:
		return float64(le.Uint16(b))
	case miINT32:
		return float64(int32(le.Uint32(b)))
	case miUINT32:
		return float64(le.Uint32(b))
	case miSINGLE:
		return float64(math.Float32frombits(le.Uint32(b)))
	case miDOUBLE:
		return math.Float64frombits(le.Uint64(b))
	case miINT64:
		return float64(int64(le.Uint64(b)))
	case miUINT64:
		return float64(le.Uint64(b))
	}
	panic("dataset: matValue: non-numeric type") // callers check matElemSize
}
