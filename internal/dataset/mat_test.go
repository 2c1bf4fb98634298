package dataset

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"strings"
	"testing"
)

func TestReadMATRoundTrip(t *testing.T) {
	// Every numeric storage type, with values that each type holds exactly.
	for _, c := range []struct {
		name  string
		class uint32
		typ   uint32
		vals  []float64
	}{
		{"i8", 8, miINT8, []float64{-128, 0, 127, -1, 5, 6}},
		{"u8", 9, miUINT8, []float64{0, 255, 8, 238, 1, 2}},
		{"i16", 10, miINT16, []float64{-32768, 32767, 0, -5, 7, 9}},
		{"u16", 11, miUINT16, []float64{65535, 0, 1, 2, 3, 4}},
		{"i32", 12, miINT32, []float64{-2147483648, 2147483647, 0, 1, 2, 3}},
		{"u32", 13, miUINT32, []float64{4294967295, 0, 1, 2, 3, 4}},
		{"sgl", 7, miSINGLE, []float64{0.5, -1.25, 1 << 34, 0, 1, 2}},
		{"dbl", 6, miDOUBLE, []float64{math.Pi, -math.E, 1e-300, 0, 1, 2}},
		{"i64", 14, miINT64, []float64{-1 << 53, 1 << 53, 0, 1, 2, 3}},
		{"u64", 15, miUINT64, []float64{1 << 60, 0, 1, 2, 3, 4}},
		{"dblStoredAsU8", 6, miUINT8, []float64{1, 2, 3, 4, 5, 6}}, // MATLAB stores small integers compactly
	} {
		b := writeMAT(matVar{name: c.name, class: c.class, typ: c.typ, rows: 2, cols: 3, data: c.vals},
			matVar{name: "x", class: 6, typ: miDOUBLE, rows: 1, cols: 1, data: []float64{42}})
		vars, err := ReadMAT(bytes.NewReader(b))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if len(vars) != 2 {
			t.Errorf("%s: %d variables, want 2", c.name, len(vars))
			continue
		}
		m := vars[0]
		if m.Name != c.name || m.Rows != 2 || m.Cols != 3 || m.Class != matClasses[c.class] {
			t.Errorf("%s: got %q %d×%d %s", c.name, m.Name, m.Rows, m.Cols, m.Class)
		}
		for i, v := range c.vals {
			if m.Data[i] != v {
				t.Errorf("%s: element %d = %v, want %v", c.name, i, m.Data[i], v)
			}
		}
		// Column-major: element (1, 0) is the second value.
		if m.At(1, 0) != c.vals[1] || m.Dense().At(0, 2) != c.vals[4] {
			t.Errorf("%s: At or Dense not column-major", c.name)
		}
		if x := vars[1]; x.Name != "x" || x.Data[0] != 42 {
			t.Errorf("%s: second variable %+v", c.name, x)
		}
	}
}

func TestReadMATErrors(t *testing.T) {
	good := writeMAT(matVar{name: "ff", class: 9, typ: miUINT8, rows: 2, cols: 2, data: []float64{1, 2, 3, 4}})
	mod := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	compressed := mod(func(b []byte) []byte {
		binary.LittleEndian.PutUint32(b[128:], miCOMPRESSED)
		return b
	})
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "shorter than the 128-byte header"},
		{"v7.3", append([]byte("MATLAB 7.3 MAT-file"), make([]byte, 200)...), "version 7.3 (HDF5)"},
		{"v4", make([]byte, 200), "not a version 5 MAT-file"},
		{"big-endian", mod(func(b []byte) []byte { copy(b[126:], "MI"); return b }), "big-endian"},
		{"bad endian", mod(func(b []byte) []byte { copy(b[126:], "xx"); return b }), "endian indicator"},
		{"compressed", compressed, "compressed (miCOMPRESSED)"},
		{"truncated", good[:len(good)-3], "only"},
		{"truncated tag", good[:133], "too few for an 8-byte tag"},
		{"complex", writeMAT(matVar{name: "z", class: 6, typ: miDOUBLE, rows: 1, cols: 1, data: []float64{1}, flags: 0x0800}), "complex"},
		{"sparse", writeMAT(matVar{name: "s", class: 5, typ: miDOUBLE, rows: 1, cols: 1, data: []float64{1}}), "sparse arrays are not supported"},
		{"cell", writeMAT(matVar{name: "c", class: 1, typ: miDOUBLE, rows: 1, cols: 1, data: []float64{1}}), "cell arrays"},
		{"struct", writeMAT(matVar{name: "s", class: 2, typ: miDOUBLE, rows: 1, cols: 1, data: []float64{1}}), "struct arrays"},
		{"char", writeMAT(matVar{name: "s", class: 4, typ: miUINT16, rows: 1, cols: 1, data: []float64{65}}), "char arrays"},
		{"3-D", writeMAT(matVar{name: "a", class: 6, typ: miDOUBLE, dims: []int32{1, 1, 2}, data: []float64{1, 2}}), "3 dimensions"},
		{"negative dims", writeMAT(matVar{name: "a", class: 6, typ: miDOUBLE, rows: -1, cols: 1, data: []float64{1}}), "negative"},
		{"too many elements", writeMAT(matVar{name: "a", class: 6, typ: miDOUBLE, rows: 1 << 13, cols: 1 << 13, data: []float64{1}}), "8192×8192 matrix: more elements than the limit 16777216"},
		{"short data", writeMAT(matVar{name: "a", class: 6, typ: miDOUBLE, rows: 2, cols: 2, data: []float64{1}}), "bytes of data for 2×2"},
		{"NaN", writeMAT(matVar{name: "a", class: 6, typ: miDOUBLE, rows: 1, cols: 1, data: []float64{math.NaN()}}), "not a finite number"},
		{"not a matrix", append(bytes.Clone(good[:128]), 9, 0, 0, 0, 8, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8), "want a matrix"},
		{"unknown class", writeMAT(matVar{name: "a", class: 40, typ: miDOUBLE, rows: 1, cols: 1, data: []float64{1}}), "unknown array class"},
		{"bad name", writeMAT(matVar{name: "a\x00", class: 6, typ: miDOUBLE, rows: 1, cols: 1, data: []float64{1}}), "not printable"},
	} {
		_, err := ReadMAT(bytes.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "MAT-file") {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

func TestReadMATSizeLimit(t *testing.T) {
	defer func(n int64) { maxFileSize = n }(maxFileSize)
	maxFileSize = 100
	b := writeMAT(matVar{name: "ff", class: 9, typ: miUINT8, rows: 2, cols: 2, data: []float64{1, 2, 3, 4}})
	if _, err := ReadMAT(bytes.NewReader(b)); err == nil || !strings.Contains(err.Error(), "larger than the limit of 100 bytes") {
		t.Errorf("err = %v, want the size limit", err)
	}
}

func TestReadMATEmptyVariable(t *testing.T) {
	b := writeMAT(matVar{name: "e", class: 6, typ: miDOUBLE, rows: 0, cols: 0})
	vars, err := ReadMAT(bytes.NewReader(b))
	if err != nil || len(vars) != 1 || vars[0].Rows != 0 || vars[0].Dense() != nil {
		t.Errorf("empty matrix: %v %+v", err, vars)
	}
}

// FuzzReadMAT checks that ReadMAT never panics and that what it accepts is
// consistent.
func FuzzReadMAT(f *testing.F) {
	f.Add(writeMAT(matVar{name: "ff", class: 9, typ: miUINT8, rows: 2, cols: 3, data: []float64{1, 2, 3, 4, 5, 6}}))
	f.Add(writeMAT(matVar{name: "abcdefgh", class: 6, typ: miDOUBLE, rows: 1, cols: 2, data: []float64{1, 2}},
		matVar{name: "e", class: 6, typ: miDOUBLE}))
	if b, err := os.ReadFile(freyFixtureFile); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		vars, err := ReadMAT(bytes.NewReader(b))
		if err != nil {
			if strings.HasPrefix(err.Error(), "dataset: ") {
				t.Errorf("error with a package prefix: %v", err)
			}
			return
		}
		for _, v := range vars {
			if len(v.Data) != v.Rows*v.Cols {
				t.Errorf("%q: %d values for %d×%d", v.Name, len(v.Data), v.Rows, v.Cols)
			}
		}
	})
}
