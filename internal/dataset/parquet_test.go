package dataset

import (
	"bytes"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"gonum.org/v1/gonum/mat"
)

// walkParquet returns rows rows of the walk of seed as Parquet, in row
// groups of 1,000 rows.
func walkParquet(t testing.TB, rows int, seed uint64) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := writeWalkParquet(&b, rows, seed, 1000); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestWalkParquet: the walk written as Parquet reads back as the .npy's
// data, bit for bit (both hold the generator's float64s), its columns in
// the CSV's order; the same seed gives the same bytes.
func TestWalkParquet(t *testing.T) {
	const rows = 2500 // three row groups
	b := walkParquet(t, rows, 5)
	if !bytes.Equal(b, walkParquet(t, rows, 5)) {
		t.Error("seed 5 gave two different files")
	}
	pq, err := ReadParquet(bytes.NewReader(b), int64(len(b)), "walk.parquet", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var npy bytes.Buffer
	if err := WriteWalkNPY(&npy, rows, 5); err != nil {
		t.Fatal(err)
	}
	np, err := ReadNPY(&npy, "walk.npy", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameData(t, "Parquet and .npy", pq, np)
	if strings.Join(pq.OutputNames, ",") != strings.Join(np.OutputNames, ",") || pq.Name != "parquet:walk.parquet" || strings.Join(pq.TruthNames, ",") != "truth_x,truth_y" {
		t.Errorf("%s: outputs %q…, truth %q", pq.Name, pq.OutputNames[:3], pq.TruthNames)
	}
}

// parquetOf writes rows as Parquet with the library's own writer.
func parquetOf[T any](t testing.TB, rows []T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := parquet.Write(&b, rows); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestReadParquetTypes: integers, floats, booleans and strings are read;
// a numeric split says 0 train, 1 test; a missing output is refused.
func TestReadParquetTypes(t *testing.T) {
	type row struct {
		Time  int32   `parquet:"x_time"`
		A     float32 `parquet:"y_a"`
		B     int64   `parquet:"y_b"`
		On    bool    `parquet:"label_on"`
		Room  string  `parquet:"label_room,dict"`
		Split int64   `parquet:"split"`
	}
	b := parquetOf(t, []row{{0, 0.5, -3, true, "hall", 0}, {1, 1.5, 4, false, "lab", 1}, {2, -2, 7, true, "hall", 0}})
	ds, err := ReadParquet(bytes.NewReader(b), int64(len(b)), "t.parquet", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(ds.X, mat.NewDense(2, 1, []float64{0, 2})) || !mat.Equal(ds.Y, mat.NewDense(2, 2, []float64{0.5, -3, -2, 7})) ||
		!mat.Equal(ds.YTest, mat.NewDense(1, 2, []float64{1.5, 4})) {
		t.Errorf("X %v Y %v YTest %v", mat.Formatted(ds.X), mat.Formatted(ds.Y), mat.Formatted(ds.YTest))
	}
	if len(ds.Columns) != 2 || strings.Join(ds.Columns[1].Categories, ",") != "hall,lab" || ds.Columns[0].Values[1] != 1 {
		t.Errorf("label columns %+v", ds.Columns)
	}

	type missing struct {
		X float64  `parquet:"x"`
		Y *float64 `parquet:"y,optional"`
	}
	one := 1.0
	b = parquetOf(t, []missing{{0, &one}, {1, nil}})
	if _, err := ReadParquet(bytes.NewReader(b), int64(len(b)), "t.parquet", CSVOptions{}); err == nil || !strings.Contains(err.Error(), `column "y": row 2: a missing (null) value`) {
		t.Errorf("a null output: %v", err)
	}
	if _, err := ReadParquet(bytes.NewReader(b), int64(len(b)), "t.parquet", CSVOptions{MaxRows: 1}); err == nil || !strings.Contains(err.Error(), "2 data rows, more than the limit of 1 rows (-max-rows raises it)") {
		t.Errorf("past the row limit: %v", err)
	}
}

// TestReadParquetCorrupt: truncated and corrupted files give an error
// that names the file, never a panic.
func TestReadParquetCorrupt(t *testing.T) {
	good := walkParquet(t, 300, 1)
	for _, c := range parquetCorruptions(good) {
		_, err := ReadParquet(bytes.NewReader(c), int64(len(c)), "bad.parquet", CSVOptions{})
		if err == nil {
			// A flipped byte inside a value may still read: then the
			// data set must be consistent, which FuzzReadParquet checks.
			continue
		}
		if !strings.HasPrefix(err.Error(), "parquet bad.parquet: ") {
			t.Errorf("error %q does not name the file", err)
		}
	}
	for _, b := range [][]byte{nil, []byte("PAR1"), []byte("x,y\n1,2\n"), good[:len(good)/2], good[:len(good)-3]} {
		if _, err := ReadParquet(bytes.NewReader(b), int64(len(b)), "bad.parquet", CSVOptions{}); err == nil {
			t.Errorf("%d bytes of a cut file read without error", len(b))
		}
	}
}

// parquetCorruptions returns copies of good with bytes changed at spread
// places: in the header, the pages and the footer.
func parquetCorruptions(good []byte) [][]byte {
	var out [][]byte
	for _, at := range []int{4, 40, len(good) / 3, len(good) / 2, len(good) - 200, len(good) - 40, len(good) - 9} {
		if at < 0 || at >= len(good) {
			continue
		}
		b := bytes.Clone(good)
		b[at] ^= 0xff
		out = append(out, b)
		c := bytes.Clone(good)
		copy(c[at:], bytes.Repeat([]byte{0xff}, min(8, len(c)-at)))
		out = append(out, c)
	}
	return out
}

// FuzzReadParquet: any input gives a consistent data set or an error,
// never a panic; seeded with a walk, cut and corrupted copies of it.
func FuzzReadParquet(f *testing.F) {
	good := walkParquet(f, 40, 1)
	f.Add(good)
	f.Add(good[:len(good)/2])
	for _, c := range parquetCorruptions(good) {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, err := ReadParquet(bytes.NewReader(b), int64(len(b)), "fuzz", CSVOptions{MaxRows: 1000})
		if err != nil {
			return
		}
		checkParsed(t, ds)
	})
}
