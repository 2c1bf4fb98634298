package dataset

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"gonum.org/v1/gonum/mat"
)

// CSVOptions selects the input and output columns of a CSV file by header
// name. An empty InputColumns selects every column whose name starts with
// "x"; an empty OutputColumns selects every column whose name starts with
// "y". Columns that are neither inputs nor outputs are ignored.
type CSVOptions struct {
	InputColumns, OutputColumns []string
}

// LoadCSV reads the CSV file at path; see ReadCSV. The data set is named
// after the base name of path.
func LoadCSV(path string, opt CSVOptions) (*Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: csv: %w", err)
	}
	defer f.Close()
	return readCSV(f, filepath.Base(path), "csv "+path, opt)
}

// ReadCSV reads a regression data set from CSV text with a header row.
// The data set is named "csv:" + name.
//
// The first record is the header: unique, non-empty column names. Every
// following record is a data row with as many fields as the header. Fields
// are trimmed of surrounding white space, blank lines are skipped, and both
// LF and CRLF line endings are accepted, as is a leading UTF-8 byte order
// mark. The selected input and output columns (see CSVOptions) must hold
// finite numbers; ignored columns may hold anything. There is no held-out
// set.
func ReadCSV(r io.Reader, name string, opt CSVOptions) (*Dataset, error) {
	return readCSV(r, name, "csv "+name, opt)
}

// readCSV implements ReadCSV; src names the input in errors.
func readCSV(r io.Reader, name, src string, opt CSVOptions) (*Dataset, error) {
	errorf := func(format string, args ...any) error {
		return fmt.Errorf("dataset: %s: %s", src, fmt.Sprintf(format, args...))
	}
	readErr := func(err error) error {
		if errors.Is(err, errTooLarge) {
			return sizeError(src)
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return errorf("line %d, character %d: %v", pe.Line, pe.Column, pe.Err)
		}
		return fmt.Errorf("dataset: %s: %w", src, err)
	}

	cr := csv.NewReader(newLimitReader(r))
	cr.FieldsPerRecord = -1 // ragged rows are reported below, with names
	cr.TrimLeadingSpace = true

	header, err := cr.Read()
	if err == io.EOF {
		return nil, errorf("empty file")
	}
	if err != nil {
		return nil, readErr(err)
	}
	headerLine, _ := cr.FieldPos(0)
	header[0] = strings.TrimPrefix(header[0], "\uFEFF")
	if len(header) > MaxColumns {
		return nil, errorf("line %d: header has %d columns, more than %d (MaxColumns)", headerLine, len(header), MaxColumns)
	}
	numeric := true
	index := make(map[string]int, len(header))
	for j := range header {
		h := strings.TrimSpace(header[j])
		header[j] = h
		if h == "" {
			return nil, errorf("line %d: header column %d has no name", headerLine, j+1)
		}
		if k, ok := index[h]; ok {
			return nil, errorf("line %d: header column %d repeats the name %q of column %d", headerLine, j+1, h, k+1)
		}
		index[h] = j
		if _, msg := parseNumber(h); msg != "" {
			numeric = false
		}
	}
	if numeric {
		return nil, errorf("line %d: missing header row: the first row holds only numbers", headerLine)
	}

	in, err := csvColumns(header, index, opt.InputColumns, "x", "input")
	if err != nil {
		return nil, errorf("%v", err)
	}
	out, err := csvColumns(header, index, opt.OutputColumns, "y", "output")
	if err != nil {
		return nil, errorf("%v", err)
	}
	for _, j := range in {
		for _, k := range out {
			if j == k {
				return nil, errorf("column %q is both an input and an output", header[j])
			}
		}
	}

	var xs, ys []float64
	rows := 0
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, readErr(err)
		}
		line, _ := cr.FieldPos(0)
		rows++
		if rows > MaxRows {
			return nil, errorf("line %d: more than %d data rows (MaxRows)", line, MaxRows)
		}
		if len(rec) != len(header) {
			return nil, errorf("line %d: %d fields, header has %d", line, len(rec), len(header))
		}
		for _, cols := range [2]struct {
			idx []int
			dst *[]float64
		}{{in, &xs}, {out, &ys}} {
			for _, j := range cols.idx {
				v, msg := parseNumber(strings.TrimSpace(rec[j]))
				if msg != "" {
					return nil, errorf("line %d, column %d (%q): %s", line, j+1, header[j], msg)
				}
				*cols.dst = append(*cols.dst, v)
			}
		}
	}
	if rows == 0 {
		return nil, errorf("no data rows after the header")
	}

	names := func(idx []int) []string {
		s := make([]string, len(idx))
		for i, j := range idx {
			s[i] = header[j]
		}
		return s
	}
	return &Dataset{
		Name:        "csv:" + name,
		Description: fmt.Sprintf("CSV file %s: %d rows, %d inputs, %d outputs", name, rows, len(in), len(out)),
		X:           mat.NewDense(rows, len(in), xs),
		Y:           mat.NewDense(rows, len(out), ys),
		InputNames:  names(in),
		OutputNames: names(out),
	}, nil
}

// csvColumns returns the indices of the columns named in want or, when want
// is empty, of the columns whose name starts with prefix. kind ("input" or
// "output") names the role in errors.
func csvColumns(header []string, index map[string]int, want []string, prefix, kind string) ([]int, error) {
	var idx []int
	if len(want) == 0 {
		for j, h := range header {
			if strings.HasPrefix(h, prefix) {
				idx = append(idx, j)
			}
		}
		if len(idx) == 0 {
			return nil, fmt.Errorf("no %s column: no column name starts with %q (header: %s)", kind, prefix, headerList(header))
		}
		return idx, nil
	}
	seen := make(map[int]bool, len(want))
	for _, w := range want {
		j, ok := index[strings.TrimSpace(w)]
		if !ok {
			return nil, fmt.Errorf("unknown %s column %q (header: %s)", kind, w, headerList(header))
		}
		if seen[j] {
			return nil, fmt.Errorf("%s column %q listed twice", kind, w)
		}
		seen[j] = true
		idx = append(idx, j)
	}
	return idx, nil
}

// headerList returns the header names joined by commas for error messages,
// shortened to about 200 bytes.
func headerList(header []string) string {
	const max = 200
	s := strings.Join(header, ",")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
