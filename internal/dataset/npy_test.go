package dataset

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// sameData fails unless a and b hold the same values: training and test
// rows, ground truth.
func sameData(t *testing.T, what string, a, b *Dataset) {
	t.Helper()
	same := func(x, y *mat.Dense) bool { return (x == nil) == (y == nil) && (x == nil || mat.Equal(x, y)) }
	if !same(a.X, b.X) || !same(a.Y, b.Y) || !same(a.XTest, b.XTest) || !same(a.YTest, b.YTest) || !same(a.Truth, b.Truth) {
		t.Errorf("%s: the values differ", what)
	}
}

// TestWalkNPYAndNPZ: the walk written as .npy and .npz reads back as the
// same data as its CSV, to the CSV's 3 decimals, with the columns the
// conventions name.
func TestWalkNPYAndNPZ(t *testing.T) {
	const rows = 500
	csv, err := ReadCSV(bytes.NewReader(walkCSV(t, rows, 3)), "walk.csv", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var npy, npz bytes.Buffer
	if err := WriteWalkNPY(&npy, rows, 3); err != nil {
		t.Fatal(err)
	}
	if err := WriteWalkNPZ(&npz, rows, 3); err != nil {
		t.Fatal(err)
	}
	a, err := ReadNPY(bytes.NewReader(npy.Bytes()), "walk.npy", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadNPZ(bytes.NewReader(npz.Bytes()), int64(npz.Len()), "walk.npz", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(a.InputNames, ",") != "x_time" || a.OutputNames[0] != "y_ap1" || a.Name != "npy:walk.npy" {
		t.Errorf(".npy: %s, inputs %q, outputs %q…", a.Name, a.InputNames, a.OutputNames[:1])
	}
	if strings.Join(b.InputNames, ",") != "x_time" || b.OutputNames[29] != "y30" || strings.Join(b.TruthNames, ",") != "truth1,truth2" {
		t.Errorf(".npz: inputs %q, outputs %q…, truth %q", b.InputNames, b.OutputNames[:1], b.TruthNames)
	}
	sameData(t, ".npy and .npz", a, b)
	round := func(m *mat.Dense) *mat.Dense {
		if m == nil {
			return nil
		}
		r := mat.DenseCopyOf(m)
		r.Apply(func(_, _ int, v float64) float64 { return math.Round(v*1000) / 1000 }, r)
		return r
	}
	a.X, a.Y, a.XTest, a.YTest, a.Truth = round(a.X), round(a.Y), round(a.XTest), round(a.YTest), round(a.Truth)
	sameData(t, ".npy rounded and CSV", a, csv)
}

// npyFile returns a .npy file of the header dict h and data.
func npyFile(h string, data []byte) []byte {
	b := []byte(npyMagic + "\x01\x00")
	b = binary.LittleEndian.AppendUint16(b, uint16(len(h)))
	return append(append(b, h...), data...)
}

// TestReadNPYLayouts: plain arrays are outputs (an autoencoder), Fortran
// order is read by columns, big-endian and narrow types are converted,
// and a numeric split says 0 train, 1 test.
func TestReadNPYLayouts(t *testing.T) {
	le := func(vs ...float64) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
		return b
	}
	// 3 × 2, C order: rows (1, 2), (3, 4), (5, 6).
	c, err := ReadNPY(bytes.NewReader(npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }\n", le(1, 2, 3, 4, 5, 6))), "c.npy", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !c.IsAutoencoder() || strings.Join(c.OutputNames, ",") != "y1,y2" || !mat.Equal(c.Y, mat.NewDense(3, 2, []float64{1, 2, 3, 4, 5, 6})) {
		t.Errorf("C order: outputs %q, Y %v", c.OutputNames, mat.Formatted(c.Y))
	}
	f, err := ReadNPY(bytes.NewReader(npyFile("{'descr': '<f8', 'fortran_order': True, 'shape': (3, 2), }\n", le(1, 3, 5, 2, 4, 6))), "f.npy", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameData(t, "Fortran order", c, f)

	// A record of big-endian int16, float32 and uint8 split.
	var rec []byte
	for i, r := range [][3]float64{{-7, 0.5, 0}, {300, -1.25, 1}, {2, 4, 0}} {
		rec = binary.BigEndian.AppendUint16(rec, uint16(int16(r[0])))
		rec = binary.LittleEndian.AppendUint32(rec, math.Float32bits(float32(r[1])))
		rec = append(rec, byte(r[2]))
		_ = i
	}
	s, err := ReadNPY(bytes.NewReader(npyFile("{'descr': [('x', '>i2'), ('y', '<f4'), ('split', '|u1')], 'fortran_order': False, 'shape': (3,), }", rec)), "s.npy", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(s.X, mat.NewDense(2, 1, []float64{-7, 2})) || !mat.Equal(s.Y, mat.NewDense(2, 1, []float64{0.5, 4})) || !mat.Equal(s.YTest, mat.NewDense(1, 1, []float64{-1.25})) {
		t.Errorf("records: X %v Y %v YTest %v", mat.Formatted(s.X), mat.Formatted(s.Y), mat.Formatted(s.YTest))
	}
}

// TestReadNPYErrors: what is wrong is said, with the limits' flags.
func TestReadNPYErrors(t *testing.T) {
	f8 := "{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }"
	for _, c := range []struct {
		name string
		in   []byte
		opt  CSVOptions
		want string
	}{
		{"empty", nil, CSVOptions{}, "not a .npy file"},
		{"not npy", []byte("x,y\n1,2\n"), CSVOptions{}, "not a .npy file"},
		{"version", []byte(npyMagic + "\x09\x00\x00\x00"), CSVOptions{}, "format version 9"},
		{"truncated header", npyFile("{'descr': '<f8'", nil)[:15], CSVOptions{}, "ends early"},
		{"bad dict", npyFile("{'descr': '<f8', 'shape': (2,)}", nil), CSVOptions{}, "no fortran_order"},
		{"bad type", npyFile(strings.NewReplacer("<f8", "<c16", "%s", "1,").Replace(f8), nil), CSVOptions{}, `type "<c16"`},
		{"object", npyFile(strings.NewReplacer("<f8", "|O", "%s", "1,").Replace(f8), nil), CSVOptions{}, `type "|O"`},
		{"3-D", npyFile(strings.Replace(f8, "%s", "2, 2, 2", 1), nil), CSVOptions{}, "shape [2 2 2]"},
		{"truncated data", npyFile(strings.Replace(f8, "%s", "4, 2", 1), make([]byte, 40)), CSVOptions{}, "ends early"},
		{"rows", npyFile(strings.Replace(f8, "%s", "4, 2", 1), make([]byte, 64)), CSVOptions{MaxRows: 3}, "4 data rows, more than the limit of 3 rows (-max-rows raises it)"},
		{"NaN", npyFile(strings.Replace(f8, "%s", "1, 2", 1), binary.LittleEndian.AppendUint64(make([]byte, 8), math.Float64bits(math.NaN()))), CSVOptions{}, `row 1, column "y2": NaN is not a finite number`},
		{"huge claim", npyFile(strings.Replace(f8, "%s", "1000000000000, 2", 1), nil), CSVOptions{MaxRows: -1}, "ends early"},
		{"text output", npyFile("{'descr': [('x', '<f8'), ('y', '<U2')], 'fortran_order': False, 'shape': (1,), }", make([]byte, 16)), CSVOptions{}, `column "y" holds text`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadNPY(bytes.NewReader(c.in), "t.npy", c.opt)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "npy t.npy: ") {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// TestReadNPZErrors: a file that is not a zip of .npy arrays says so.
func TestReadNPZErrors(t *testing.T) {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create("notes.txt")
	w.Write([]byte("hello"))
	zw.Close()
	for _, c := range []struct {
		in   []byte
		want string
	}{
		{[]byte("not a zip"), "not a .npz file"},
		{b.Bytes(), `"notes.txt" is not a .npy array`},
	} {
		_, err := ReadNPZ(bytes.NewReader(c.in), int64(len(c.in)), "t.npz", CSVOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want %q", err, c.want)
		}
	}
}

// TestLoadNumPyByExtension: Load reads .npy and .npz paths, and npy: and
// npz: specs.
func TestLoadNumPyByExtension(t *testing.T) {
	dir := t.TempDir()
	for _, ext := range []string{"npy", "npz"} {
		path := filepath.Join(dir, "walk."+ext)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		write := WriteWalkNPY
		if ext == "npz" {
			write = WriteWalkNPZ
		}
		if err := write(f, 40, 1); err != nil {
			t.Fatal(err)
		}
		f.Close()
		for _, spec := range []string{path, ext + ":" + path} {
			ds, err := Load(spec)
			if err != nil {
				t.Fatal(err)
			}
			if n, m := ds.Rows(); n != 36 || m != 4 || ds.Name != ext+":walk."+ext {
				t.Errorf("Load(%s): %s, %d + %d rows", spec, ds.Name, n, m)
			}
		}
	}
}

// FuzzReadNPY: any input gives a consistent data set or an error, never
// a panic.
func FuzzReadNPY(f *testing.F) {
	var walk bytes.Buffer
	WriteWalkNPY(&walk, 12, 1)
	f.Add(walk.Bytes())
	f.Add(npyFile("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }\n", make([]byte, 32)))
	f.Add(npyFile("{'descr': [('x', '>i2'), ('y', '<f2', (2,)), ('split', '|S5')], 'fortran_order': False, 'shape': (1,), }", []byte("\x00\x01\x00\x3c\x00\x40test\x00")))
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, err := ReadNPY(bytes.NewReader(b), "fuzz", CSVOptions{MaxRows: 1000})
		if err != nil {
			return
		}
		checkParsed(t, ds)
	})
}

// FuzzReadNPZ: likewise for .npz files.
func FuzzReadNPZ(f *testing.F) {
	var walk bytes.Buffer
	WriteWalkNPZ(&walk, 12, 1)
	f.Add(walk.Bytes())
	f.Add(walk.Bytes()[:walk.Len()/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, err := ReadNPZ(bytes.NewReader(b), int64(len(b)), "fuzz", CSVOptions{MaxRows: 1000})
		if err != nil {
			return
		}
		checkParsed(t, ds)
	})
}

// TestNumPyFixtures reads files that numpy itself wrote
// (scripts/make-numpy-fixtures.py): a structured array with float32,
// big-endian int16 and text fields, a Fortran-ordered float32 array, and
// a compressed .npz of plain arrays with a numeric split.
func TestNumPyFixtures(t *testing.T) {
	rec, err := LoadNPY("testdata/numpy_records.npy", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Rows 0…5; rows 2 and 5 are test rows.
	train, test := []float64{0, 1, 3, 4}, []float64{2, 5}
	col := func(rows []float64, f func(float64) float64) []float64 {
		out := make([]float64, len(rows))
		for k, i := range rows {
			out[k] = f(i)
		}
		return out
	}
	inter := func(a, b []float64) []float64 {
		out := make([]float64, 0, 2*len(a))
		for k := range a {
			out = append(out, a[k], b[k])
		}
		return out
	}
	ya, yb := func(i float64) float64 { return -60 + i*0.25 }, func(i float64) float64 { return -70 + 3*i }
	if !mat.Equal(rec.X, mat.NewDense(4, 1, col(train, func(i float64) float64 { return i * 0.5 }))) ||
		!mat.Equal(rec.Y, mat.NewDense(4, 2, inter(col(train, ya), col(train, yb)))) ||
		!mat.Equal(rec.YTest, mat.NewDense(2, 2, inter(col(test, ya), col(test, yb)))) {
		t.Errorf("records: X %v, Y %v, YTest %v", mat.Formatted(rec.X), mat.Formatted(rec.Y), mat.Formatted(rec.YTest))
	}
	if len(rec.Columns) != 1 || strings.Join(rec.Columns[0].Categories, ",") != "hall,kitchen" {
		t.Errorf("records: label columns %+v", rec.Columns)
	}

	f, err := LoadNPY("testdata/numpy_fortran.npy", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, 18)
	for k := range want {
		want[k] = float64(k) / 4
	}
	if !f.IsAutoencoder() || !mat.Equal(f.Y, mat.NewDense(6, 3, want)) {
		t.Errorf("Fortran order: Y %v", mat.Formatted(f.Y))
	}

	z, err := LoadNPZ("testdata/numpy_arrays.npz", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sq := func(i float64) float64 { return i * i }
	if strings.Join(z.InputNames, ",") != "x1,x2" || strings.Join(z.OutputNames, ",") != "y1" ||
		!mat.Equal(z.X, mat.NewDense(4, 2, inter(train, col(train, sq)))) ||
		!mat.Equal(z.YTest, mat.NewDense(2, 1, col(test, func(i float64) float64 { return 10*i - 3 }))) ||
		!mat.Equal(z.Truth, mat.NewDense(6, 2, inter(col(append(train, test...), func(i float64) float64 { return -i }), col(append(train, test...), func(i float64) float64 { return i + 0.5 })))) {
		t.Errorf("npz: inputs %q outputs %q X %v YTest %v truth %v", z.InputNames, z.OutputNames, mat.Formatted(z.X), mat.Formatted(z.YTest), mat.Formatted(z.Truth))
	}
}
