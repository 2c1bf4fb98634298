package dataset

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// scanAll reads every record of b with csvScanner: the fields and the
// line each record starts on, or the first error.
func scanAll(b []byte) (recs [][]string, lines []int, err error) {
	sc := newCSVScanner(bytes.NewReader(b))
	for {
		rec, err := sc.next()
		if err == io.EOF {
			return recs, lines, nil
		}
		if err != nil {
			return recs, lines, err
		}
		fields := make([]string, len(rec))
		for i, f := range rec {
			fields[i] = string(f)
		}
		recs, lines = append(recs, fields), append(lines, sc.start)
	}
}

// stdAll reads b with encoding/csv as the loader used to.
func stdAll(b []byte) (recs [][]string, lines []int, err error) {
	cr := csv.NewReader(bytes.NewReader(b))
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return recs, lines, nil
		}
		if err != nil {
			return recs, lines, err
		}
		line, _ := cr.FieldPos(0)
		recs, lines = append(recs, rec), append(lines, line)
	}
}

var scannerSeeds = []string{
	"x,y\n1,2\n", "x, y\r\n 1 ,2\r\n\r\n3,4", "\"a\"\"b\",c\n", "\"multi\nline\",2\n3,4\n", "a,\"b\n", "a\"b,c\n",
	"\"a\" ,b\n", "\"a\"x\n", ",,\n", "\r", "a\rb,c\r\n", "\u00a0x,\u2003\"q\"\n", "\"\"\n", "x\n\n\ny\n", "\"a\r\nb\"\n",
}

// TestScannerMatchesEncodingCSV: the streaming scanner reads what
// encoding/csv reads (FieldsPerRecord -1, TrimLeadingSpace): the same
// records starting on the same lines, and an error where it has one.
func TestScannerMatchesEncodingCSV(t *testing.T) {
	for _, s := range scannerSeeds {
		compareScanners(t, []byte(s))
	}
}

// FuzzCSVScanner: likewise for any input.
func FuzzCSVScanner(f *testing.F) {
	for _, s := range scannerSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(compareScanners)
}

func compareScanners(t *testing.T, b []byte) {
	got, gotLines, gotErr := scanAll(b)
	want, wantLines, wantErr := stdAll(b)
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("%q: error %v, encoding/csv's %v", b, gotErr, wantErr)
	}
	if fmt.Sprintf("%q %v", got, gotLines) != fmt.Sprintf("%q %v", want, wantLines) {
		t.Fatalf("%q: records %q on lines %v, encoding/csv's %q on %v", b, got, gotLines, want, wantLines)
	}
	if wantErr != nil {
		pe := wantErr.(*csv.ParseError)
		se, ok := gotErr.(*csvSyntaxError)
		if !ok || se.line != pe.Line || se.msg != pe.Err.Error() {
			t.Fatalf("%q: error %v, encoding/csv's %v", b, gotErr, wantErr)
		}
	}
}

// TestReadCSVReadsLongLines: a line longer than the scanner's buffer.
func TestReadCSVReadsLongLines(t *testing.T) {
	var b strings.Builder
	b.WriteString("x,y")
	for j := range 999 - 2 {
		fmt.Fprintf(&b, ",label%d", j)
	}
	b.WriteString(",split\n")
	long := strings.Repeat("w", 300<<10)
	for i := range 3 {
		fmt.Fprintf(&b, "%d,%d", i, 2*i)
		for range 999 - 2 {
			b.WriteString("," + long[:1000])
		}
		b.WriteString(",train\n")
	}
	ds, err := ReadCSV(strings.NewReader(b.String()), "long.csv", CSVOptions{MaxBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Y.At(2, 0) != 4 || len(ds.Columns) != 997 || ds.Columns[5].Categories[0] != long[:1000] {
		t.Errorf("read Y[2] = %v, %d label columns", ds.Y.At(2, 0), len(ds.Columns))
	}
}

// numericCSV returns a CSV of rows rows: x_time and 30 outputs in dBm,
// the shape of the robot walk, with prec digits after the point (-1: the
// shortest text that reads back as the float64).
func numericCSV(rows, prec int) []byte {
	var b bytes.Buffer
	b.WriteString("x_time")
	for j := range 30 {
		fmt.Fprintf(&b, ",y_ap%d", j+1)
	}
	b.WriteString("\n")
	rng := rand.New(rand.NewPCG(1, 2))
	var buf []byte
	for i := range rows {
		buf = strconv.AppendFloat(buf[:0], float64(i)/4, 'f', -1, 64)
		for range 30 {
			buf = append(buf, ',')
			buf = strconv.AppendFloat(buf, -60+10*rng.NormFloat64(), 'f', prec, 64)
		}
		buf = append(buf, '\n')
		b.Write(buf)
	}
	return b.Bytes()
}

// BenchmarkCSV31Columns reads a numeric file of 31 columns (10,000 rows
// of numbers with 3 decimals, as the walk generator writes, 2.4 MB); MB/s
// is the parser's speed on one core.
func BenchmarkCSV31Columns(b *testing.B) {
	data := numericCSV(10000, 3)
	benchmarkCSV(b, data)
}

// BenchmarkCSV31ColumnsFullPrecision is a file whose numbers have
// float64's full 17 significant digits (strconv's shortest form): the
// parser's slow path.
func BenchmarkCSV31ColumnsFullPrecision(b *testing.B) {
	data := numericCSV(10000, -1)
	benchmarkCSV(b, data)
}

// benchmarkCSV reads data as ReadCSV does, without limits, reporting MB
// per second of wall time (b.SetBytes) and of CPU time (MB/cpu-s).
func benchmarkCSV(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu := cpuSeconds()
	for b.Loop() {
		if _, err := ReadCSV(bytes.NewReader(data), "bench.csv", CSVOptions{MaxRows: -1, MaxBytes: -1}); err != nil {
			b.Fatal(err)
		}
	}
	if cpu := cpuSeconds() - cpu; cpu > 0 {
		b.ReportMetric(float64(b.N)*float64(len(data))/1e6/cpu, "MB/cpu-s")
	}
}

// BenchmarkCSV31ColumnsEncodingCSV is the same file read by encoding/csv
// and strconv, the former loader's way: the baseline.
func BenchmarkCSV31ColumnsEncodingCSV(b *testing.B) {
	data := numericCSV(10000, 3)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu := cpuSeconds()
	defer func() {
		if cpu := cpuSeconds() - cpu; cpu > 0 {
			b.ReportMetric(float64(b.N)*float64(len(data))/1e6/cpu, "MB/cpu-s")
		}
	}()
	for b.Loop() {
		cr := csv.NewReader(bytes.NewReader(data))
		cr.FieldsPerRecord = -1
		cr.TrimLeadingSpace = true
		var vals []float64
		cr.Read()
		for {
			rec, err := cr.Read()
			if err == io.EOF {
				break
			}
			for _, f := range rec {
				v, _ := strconv.ParseFloat(strings.TrimSpace(f), 64)
				vals = append(vals, v)
			}
		}
	}
}

// TestFastFloatIsParseFloat: the fast path gives ParseFloat's value, bit
// for bit, wherever it answers, and answers for the usual shapes.
func TestFastFloatIsParseFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(s string) {
		v, ok := fastFloat([]byte(s))
		want, err := strconv.ParseFloat(s, 64)
		if ok && (err != nil || math.Float64bits(v) != math.Float64bits(want)) {
			t.Fatalf("fastFloat(%q) = %v, ParseFloat %v, %v", s, v, want, err)
		}
	}
	for _, s := range []string{"0", "-0", "+1", "1.", ".5", "-.5e3", "1e22", "1e23", "123456789012345", "1234567890123456", "9007199254740993",
		"1e", "1e+", "e5", ".", "-", "1.5e-22", "0.000000000000000000001", "1_0", "0x10", "1e0001", "Inf", "1.2.3", "1e-5x"} {
		check(s)
	}
	for range 100000 {
		v := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(30)-15))
		for _, f := range []byte{'g', 'f', 'e'} {
			check(strconv.FormatFloat(v, f, rng.IntN(18)-1, 64))
		}
	}
	for _, s := range []string{"-61.25", "3e-4", "12", "0.001", "-92"} {
		if _, ok := fastFloat([]byte(s)); !ok {
			t.Errorf("fastFloat(%q) left to ParseFloat", s)
		}
	}
}

// FuzzFastFloat: likewise for any text.
func FuzzFastFloat(f *testing.F) {
	for _, s := range []string{"-61.25", "1e22", "0.1", "1e-22", "+.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" {
			return
		}
		v, ok := fastFloat([]byte(s))
		want, err := strconv.ParseFloat(s, 64)
		if ok && (err != nil || math.Float64bits(v) != math.Float64bits(want)) {
			t.Fatalf("fastFloat(%q) = %v, ParseFloat %v, %v", s, v, want, err)
		}
	})
}
