package dataset

import (
	"archive/zip"
	"bufio"
	"bytes"
	"dgpviz/internal/wire"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// NumPyConventions describes, for people, how ReadNPY and ReadNPZ name the
// columns of NumPy arrays, which are then read by CSVConventions.
const NumPyConventions = `NumPy files follow the same column conventions: a .npy of a structured array has one column per field, named by the field (x_time, y_ap1, split, …); a plain 2-D .npy holds outputs only (y1…yD: an autoencoder). In a .npz each array gives columns named after it: a 1-D array named split gives the column split, a 2-D array named x gives x1…xQ, y gives y1…yD, and a structured array its fields. Numbers may be float64, float32, integers or booleans; text (split, label…) bytes or Unicode strings; a split may also hold 0 (train) and 1 (test).`

// LoadNPY reads the NumPy .npy file at path; see ReadNPY.
func LoadNPY(path string, opt CSVOptions) (*Dataset, error) {
	f, size, err := openSized(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	opt.sizeHint = size
	return readNPY(f, filepath.Base(path), "npy "+path, opt)
}

// ReadNPY reads a regression data set from a NumPy .npy file (format
// versions 1 to 3): a structured array whose fields are named columns, or
// a plain 1-D or 2-D array of outputs (NumPyConventions). Little- and
// big-endian numbers of every width, in C or Fortran order, are read.
// The data set is named "npy:" + name.
func ReadNPY(r io.Reader, name string, opt CSVOptions) (*Dataset, error) {
	return readNPY(r, name, "npy "+name, opt)
}

func readNPY(r io.Reader, name, src string, opt CSVOptions) (*Dataset, error) {
	cols, err := readNPYColumns(newLimitReader(r, opt.maxBytes()), "y", true, opt.maxRows(), opt.sizeHint)
	if err != nil {
		return nil, npyError(src, opt, err)
	}
	return columnsDataset(cols, "npy", name, "NumPy file", src, opt)
}

// npyError describes an error of reading src.
func npyError(src string, opt CSVOptions, err error) error {
	if errors.Is(err, errTooLarge) {
		return sizeError(src, opt.maxBytes())
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: the file ends early: truncated?", src)
	}
	return fmt.Errorf("%s: %w", src, openError(err))
}

// LoadNPZ reads the NumPy .npz file at path; see ReadNPZ.
func LoadNPZ(path string, opt CSVOptions) (*Dataset, error) {
	f, size, err := openSized(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readNPZ(f, size, filepath.Base(path), "npz "+path, opt)
}

// ReadNPZ reads a regression data set from a NumPy .npz file (a zip of
// .npy files, compressed or not, as numpy.savez writes): each array gives
// columns named after it (NumPyConventions). The data set is named "npz:"
// + name.
func ReadNPZ(r io.ReaderAt, size int64, name string, opt CSVOptions) (*Dataset, error) {
	return readNPZ(r, size, name, "npz "+name, opt)
}

func readNPZ(r io.ReaderAt, size int64, name, src string, opt CSVOptions) (*Dataset, error) {
	if max := opt.maxBytes(); max >= 0 && size > max {
		return nil, sizeError(src, max)
	}
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("%s: not a .npz file (a zip archive of .npy arrays): %v", src, strings.TrimPrefix(err.Error(), "zip: "))
	}
	if len(zr.File) > MaxColumns {
		return nil, fmt.Errorf("%s: %d arrays, more than the limit of %d columns", src, len(zr.File), MaxColumns)
	}
	var cols []column
	for _, f := range zr.File {
		arr, ok := strings.CutSuffix(f.Name, ".npy")
		if !ok {
			return nil, fmt.Errorf("%s: %q is not a .npy array", src, wire.Truncate(f.Name, 40))
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("%s: array %q: %v", src, wire.Truncate(arr, 40), strings.TrimPrefix(err.Error(), "zip: "))
		}
		// The uncompressed size, not the archive's, is what memory holds.
		var avail int64 // a stored array's size is its share of the file
		if f.Method == zip.Store && f.CompressedSize64 == f.UncompressedSize64 && f.UncompressedSize64 <= uint64(size) {
			avail = int64(f.UncompressedSize64)
		}
		c, err := readNPYColumns(newLimitReader(rc, opt.maxBytes()), arr, false, opt.maxRows(), avail)
		rc.Close()
		if err != nil {
			return nil, npyError(fmt.Sprintf("%s: array %q", src, wire.Truncate(arr, 40)), opt, err)
		}
		cols = append(cols, c...)
		if len(cols) > MaxColumns {
			return nil, fmt.Errorf("%s: more than the limit of %d columns", src, MaxColumns)
		}
	}
	return columnsDataset(cols, "npz", name, "NumPy file", src, opt)
}

// npyMagic starts every .npy file.
const npyMagic = "\x93NUMPY"

// maxNPYHeader bounds a .npy header's length (numpy writes at most a few
// hundred bytes, and 64 KiB for many fields).
const maxNPYHeader = 1 << 20

// npyType is a field's element type.
type npyType struct {
	kind  byte // 'f', 'i', 'u', 'b', 'S' or 'U'
	size  int  // bytes per element
	order binary.ByteOrder
}

// npyField is a named field of a record, of count elements.
type npyField struct {
	name  string
	typ   npyType
	count int
}

// readNPYColumns reads one .npy array from r as named columns: a
// structured array's fields by their names (a field of k elements:
// NAME1…NAMEk), a plain array's columns as prefix (1-D, unless single is
// true) or prefix1…prefixK (2-D). It refuses more rows than maxRows
// (negative: no limit) before reading them. avail, when positive, is the
// size of the file: when the rows fit in it, the columns are allocated at
// once, else as the rows arrive.
func readNPYColumns(r io.Reader, prefix string, single bool, maxRows int, avail int64) ([]column, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var pre [10]byte
	if _, err := io.ReadFull(br, pre[:8]); err != nil || string(pre[:6]) != npyMagic {
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, err
		}
		return nil, errors.New("not a .npy file: it does not start as one (\\x93NUMPY)")
	}
	var hlen int
	switch pre[6] {
	case 1:
		if _, err := io.ReadFull(br, pre[8:10]); err != nil {
			return nil, err
		}
		hlen = int(binary.LittleEndian.Uint16(pre[8:10]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return nil, err
		}
		n := binary.LittleEndian.Uint32(b[:])
		if n > maxNPYHeader {
			return nil, fmt.Errorf("a header of %d bytes, more than the limit of %d", n, maxNPYHeader)
		}
		hlen = int(n)
	default:
		return nil, fmt.Errorf(".npy format version %d, want 1, 2 or 3", pre[6])
	}
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(br, hb); err != nil {
		return nil, err
	}
	h, err := parseNPYHeader(string(hb))
	if err != nil {
		return nil, fmt.Errorf("header: %v", err)
	}
	fields, structured := h.fields, h.structured
	var rows, width int
	switch {
	case len(h.shape) == 0:
		return nil, errors.New("a single value (shape ()), want an array of rows")
	case len(h.shape) == 1:
		rows, width = h.shape[0], 1
	case len(h.shape) == 2 && !structured:
		rows, width = h.shape[0], h.shape[1]
	default:
		return nil, fmt.Errorf("an array of shape %v: want one row per entry (1-D, or 2-D for plain numbers)", h.shape)
	}
	if maxRows >= 0 && rows > maxRows {
		return nil, fmt.Errorf("%d data rows, more than the limit of %d rows (%s raises it)", rows, maxRows, RowsFlag)
	}
	if !structured {
		fields = []npyField{{name: prefix, typ: fields[0].typ, count: width}}
		if width == 1 && len(h.shape) == 1 && !single {
			fields[0].count = 0 // a 1-D array: one column, named prefix itself
		}
	}
	var cols []column
	recSize := 0
	for _, f := range fields {
		k := max(f.count, 1)
		if len(cols)+k > MaxColumns {
			return nil, fmt.Errorf("more than the limit of %d columns", MaxColumns)
		}
		for e := range k {
			name := f.name
			if f.count > 0 {
				name = fmt.Sprintf("%s%d", f.name, e+1)
			}
			cols = append(cols, column{name: name})
		}
		recSize += k * f.typ.size
	}
	if rows > 0 && recSize > 0 && rows > math.MaxInt/recSize {
		return nil, fmt.Errorf("an array of %d rows of %d bytes: too large", rows, recSize)
	}
	// Allocate as the rows arrive, so that a header that claims many rows
	// of a short file costs little; at once when the file holds them.
	grow := min(rows, 4096)
	if avail > 0 && int64(rows)*int64(recSize) <= avail {
		grow = rows
	}
	for j, f := range expand(fields) {
		if f.typ.kind == 'S' || f.typ.kind == 'U' {
			cols[j].text = make([]string, 0, grow)
		} else {
			cols[j].num = make([]float64, 0, grow)
		}
	}
	flat := expand(fields)
	if !structured && h.fortran && width > 1 {
		// Column after column.
		buf := make([]byte, fields[0].typ.size)
		for j := range cols {
			for range rows {
				if _, err := io.ReadFull(br, buf); err != nil {
					return nil, err
				}
				cols[j].add(flat[j].typ, buf)
			}
		}
		return cols, nil
	}
	rec := make([]byte, recSize)
	for range rows {
		if _, err := io.ReadFull(br, rec); err != nil {
			return nil, err
		}
		off := 0
		for j, f := range flat {
			cols[j].add(f.typ, rec[off:off+f.typ.size])
			off += f.typ.size
		}
	}
	return cols, nil
}

// expand returns one field of one element per column of fields.
func expand(fields []npyField) []npyField {
	var out []npyField
	for _, f := range fields {
		for range max(f.count, 1) {
			out = append(out, npyField{name: f.name, typ: f.typ})
		}
	}
	return out
}

// add appends the element b of type t to c.
func (c *column) add(t npyType, b []byte) {
	switch t.kind {
	case 'S':
		c.text = append(c.text, string(bytes.TrimRight(b, "\x00")))
		return
	case 'U':
		var sb strings.Builder
		for i := 0; i+4 <= len(b); i += 4 {
			r := rune(t.order.Uint32(b[i:]))
			if r == 0 {
				break
			}
			if !utf8.ValidRune(r) {
				r = utf8.RuneError
			}
			sb.WriteRune(r)
		}
		c.text = append(c.text, sb.String())
		return
	}
	var v float64
	switch t.kind {
	case 'b':
		if b[0] != 0 {
			v = 1
		}
	case 'f':
		switch t.size {
		case 2:
			v = halfFloat(t.order.Uint16(b))
		case 4:
			v = float64(math.Float32frombits(t.order.Uint32(b)))
		default:
			v = math.Float64frombits(t.order.Uint64(b))
		}
	case 'i':
		switch t.size {
		case 1:
			v = float64(int8(b[0]))
		case 2:
			v = float64(int16(t.order.Uint16(b)))
		case 4:
			v = float64(int32(t.order.Uint32(b)))
		default:
			v = float64(int64(t.order.Uint64(b)))
		}
	case 'u':
		switch t.size {
		case 1:
			v = float64(b[0])
		case 2:
			v = float64(t.order.Uint16(b))
		case 4:
			v = float64(t.order.Uint32(b))
		default:
			v = float64(t.order.Uint64(b))
		}
	}
	c.num = append(c.num, v)
}

// halfFloat converts an IEEE 754 half-precision number.
func halfFloat(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, frac := int(h>>10&0x1f), float64(h&0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac == 0 {
			return math.Inf(int(sign))
		}
		return math.NaN()
	}
	return sign * math.Ldexp(1+frac/1024, exp-15)
}

// npyHeader is what a .npy header says.
type npyHeader struct {
	fields     []npyField // one, unnamed, for a plain array
	structured bool
	fortran    bool
	shape      []int
}

// parseNPYHeader parses a .npy header: a Python dict literal with the
// keys descr, fortran_order and shape.
func parseNPYHeader(s string) (npyHeader, error) {
	var h npyHeader
	p := &pyParser{s: s}
	v, err := p.value(0)
	if err != nil {
		return h, err
	}
	if p.skip(); p.i < len(p.s) {
		return h, fmt.Errorf("unexpected %q after the dictionary", wire.Truncate(p.s[p.i:], 10))
	}
	d, ok := v.(map[string]any)
	if !ok {
		return h, errors.New("not a dictionary")
	}
	fo, ok := d["fortran_order"].(bool)
	if !ok {
		return h, errors.New("no fortran_order True or False")
	}
	h.fortran = fo
	shape, ok := d["shape"].([]any)
	if !ok {
		return h, errors.New("no shape tuple")
	}
	for _, e := range shape {
		n, ok := e.(int)
		if !ok || n < 0 {
			return h, fmt.Errorf("shape %v: want whole numbers ≥ 0", shape)
		}
		h.shape = append(h.shape, n)
	}
	switch descr := d["descr"].(type) {
	case string:
		t, err := parseNPYType(descr)
		if err != nil {
			return h, err
		}
		h.fields = []npyField{{typ: t}}
	case []any:
		h.structured = true
		for _, e := range descr {
			f, ok := e.([]any)
			if !ok || len(f) < 2 || len(f) > 3 {
				return h, errors.New("descr: want (name, type) or (name, type, shape) for each field")
			}
			name, ok1 := f[0].(string)
			ts, ok2 := f[1].(string)
			if !ok1 || !ok2 {
				return h, errors.New("descr: a field's name and type must be strings (nested records are not read)")
			}
			t, err := parseNPYType(ts)
			if err != nil {
				return h, fmt.Errorf("field %q: %v", wire.Truncate(name, 40), err)
			}
			fd := npyField{name: strings.TrimSpace(name), typ: t}
			if len(f) == 3 {
				sh, ok := f[2].([]any)
				n, ok3 := 0, false
				if ok && len(sh) == 1 {
					n, ok3 = sh[0].(int)
				}
				if !ok3 || n < 1 || n > MaxColumns {
					return h, fmt.Errorf("field %q: shape %v: want (k,) with 1 ≤ k ≤ %d", wire.Truncate(name, 40), f[2], MaxColumns)
				}
				fd.count = n
			}
			h.fields = append(h.fields, fd)
			if len(h.fields) > MaxColumns {
				return h, fmt.Errorf("more than the limit of %d columns", MaxColumns)
			}
		}
		if len(h.fields) == 0 {
			return h, errors.New("a record of no fields")
		}
	default:
		return h, errors.New("no descr")
	}
	return h, nil
}

// parseNPYType parses a NumPy type string such as "<f8", "|u1", ">i4",
// "<U5" or "|S10".
func parseNPYType(s string) (npyType, error) {
	bad := fmt.Errorf("type %q: want numbers (f2, f4, f8, i1…i8, u1…u8, b1) or text (Sn, Un)", wire.Truncate(s, 20))
	if len(s) < 3 {
		return npyType{}, bad
	}
	t := npyType{kind: s[1], order: binary.LittleEndian}
	switch s[0] {
	case '<', '|', '=':
	case '>':
		t.order = binary.BigEndian
	default:
		return t, bad
	}
	n, err := strconv.Atoi(s[2:])
	if err != nil || n < 1 {
		return t, bad
	}
	switch t.kind {
	case 'f':
		if n != 2 && n != 4 && n != 8 {
			return t, bad
		}
	case 'i', 'u':
		if n != 1 && n != 2 && n != 4 && n != 8 {
			return t, bad
		}
	case 'b':
		if n != 1 {
			return t, bad
		}
	case 'S':
		if n > 1<<16 {
			return t, fmt.Errorf("type %q: text of more than 65536 bytes", s)
		}
	case 'U':
		if n > 1<<14 {
			return t, fmt.Errorf("type %q: text of more than 16384 characters", s)
		}
		n *= 4
	default:
		return t, bad
	}
	t.size = n
	return t, nil
}

// pyParser parses the Python literals of a .npy header: dicts, tuples,
// lists, strings, whole numbers, True, False.
type pyParser struct {
	s string
	i int
}

func (p *pyParser) skip() {
	for p.i < len(p.s) && strings.IndexByte(" \t\n\r", p.s[p.i]) >= 0 {
		p.i++
	}
}

// value parses a value at nesting depth.
func (p *pyParser) value(depth int) (any, error) {
	if depth > 8 {
		return nil, errors.New("nested too deeply")
	}
	p.skip()
	if p.i >= len(p.s) {
		return nil, errors.New("ends early")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		p.i++
		d := map[string]any{}
		for {
			p.skip()
			if p.i < len(p.s) && p.s[p.i] == '}' {
				p.i++
				return d, nil
			}
			k, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			key, ok := k.(string)
			if !ok {
				return nil, errors.New("a dictionary key that is not a string")
			}
			if p.skip(); p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, errors.New("want ':' after a key")
			}
			p.i++
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			d[key] = v
			if err := p.sep('}'); err != nil {
				return nil, err
			}
		}
	case c == '(' || c == '[':
		end := byte(')')
		if c == '[' {
			end = ']'
		}
		p.i++
		var l []any
		for {
			p.skip()
			if p.i < len(p.s) && p.s[p.i] == end {
				p.i++
				return append([]any{}, l...), nil
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			if l = append(l, v); len(l) > MaxColumns+1 {
				return nil, errors.New("a list too long")
			}
			if err := p.sep(end); err != nil {
				return nil, err
			}
		}
	case c == '\'' || c == '"':
		j := strings.IndexByte(p.s[p.i+1:], c)
		if j < 0 {
			return nil, errors.New("a string without its closing quote")
		}
		v := p.s[p.i+1 : p.i+1+j]
		p.i += j + 2
		return v, nil
	case c >= '0' && c <= '9':
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(p.s[p.i:j])
		if err != nil {
			return nil, fmt.Errorf("the number %q is too large", wire.Truncate(p.s[p.i:j], 20))
		}
		p.i = j
		if p.i < len(p.s) && p.s[p.i] == 'L' { // Python 2's long
			p.i++
		}
		return n, nil
	case strings.HasPrefix(p.s[p.i:], "True"):
		p.i += 4
		return true, nil
	case strings.HasPrefix(p.s[p.i:], "False"):
		p.i += 5
		return false, nil
	}
	return nil, fmt.Errorf("unexpected %q", wire.Truncate(p.s[p.i:], 10))
}

// sep reads a ',' or, left for the caller, the closing end.
func (p *pyParser) sep(end byte) error {
	p.skip()
	if p.i < len(p.s) && p.s[p.i] == ',' {
		p.i++
		return nil
	}
	if p.i < len(p.s) && p.s[p.i] == end {
		return nil
	}
	return fmt.Errorf("want ',' or %q", end)
}
