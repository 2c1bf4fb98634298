package dataset

import (
	"bytes"
	"dgpviz/internal/wire"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"gonum.org/v1/gonum/mat"
)

// CSVOptions selects the input and output columns of a CSV file by header
// name. An empty InputColumns selects every column whose name starts with
// "x"; an empty OutputColumns selects every column whose name starts with
// "y". Columns that are neither inputs nor outputs are read by the
// conventions of ReadCSV or ignored.
type CSVOptions struct {
	InputColumns, OutputColumns []string
	// Shape, when not zero, says that every row's outputs are the pixels
	// of a Shape[0] × Shape[1] image, row by row.
	Shape [2]int
	// MaxRows refuses more data rows than this as they are read (0:
	// MaxRows; negative: no limit).
	MaxRows int
	// MaxBytes refuses a file longer than this many bytes as it is read
	// (0: MaxFileSize; negative: no limit).
	MaxBytes int64

	sizeHint int64 // the file's size, when known: the arrays are sized once
}

// RowsFlag is the command-line flag that raises the row limit of every
// command that reads data files (viz fit, viz serve); the limit's message
// names it.
const RowsFlag = "-max-rows"

func (o CSVOptions) maxRows() int {
	if o.MaxRows == 0 {
		return MaxRows
	}
	return o.MaxRows
}

func (o CSVOptions) maxBytes() int64 {
	if o.MaxBytes == 0 {
		return maxFileSize
	}
	return o.MaxBytes
}

// CSVConventions describes, for people, how ReadCSV reads a header: the
// command line's help, the README and the page's upload dialog say it.
const CSVConventions = `A header row names the columns: x… are the inputs and y… the outputs (a file with only y columns is an autoencoder: its inputs are its outputs); truth… are ground-truth coordinates (for example truth_x, truth_y: used to judge a latent space, never fitted); label… are values or categories to colour by (never fitted); a column named split says train or test for each row. A name may end in its column's unit in brackets, as in y_ap1 [dBm] or x_time [s]: the input columns share one unit, the outputs one. Other columns are ignored. Values must be finite numbers of magnitude at most 1e150.`

// LoadCSV reads the CSV file at path; see ReadCSV. The data set is named
// after the base name of path.
func LoadCSV(path string, opt CSVOptions) (*Dataset, error) {
	f, size, err := openSized(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	opt.sizeHint = size
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
// finite numbers; so must ground truth. Besides inputs and outputs, a
// header may name (CSVConventions):
//
//   - truth… columns: ground-truth coordinates of each row (Dataset.Truth);
//   - label… columns: values to colour by, numbers or categories (Dataset.Columns);
//   - a split column: train or test for each row; the test rows become the
//     held-out set, and every per-row column lists training rows first.
//
// Without input columns (and without CSVOptions.InputColumns) the inputs
// are the outputs: an autoencoder. Other columns are ignored and may hold
// anything.
func ReadCSV(r io.Reader, name string, opt CSVOptions) (*Dataset, error) {
	return readCSV(r, name, "csv "+name, opt)
}

// readCSV implements ReadCSV; src names the input in errors.
func readCSV(r io.Reader, name, src string, opt CSVOptions) (*Dataset, error) {
	errorf := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", src, fmt.Sprintf(format, args...))
	}
	readErr := func(err error) error {
		if errors.Is(err, errTooLarge) {
			return sizeError(src, opt.maxBytes())
		}
		var se *csvSyntaxError
		if errors.As(err, &se) {
			return errorf("line %d, character %d: %s", se.line, se.col, se.msg)
		}
		return fmt.Errorf("%s: %w", src, openError(err))
	}

	sc := newCSVScanner(newLimitReader(r, opt.maxBytes()))
	rec, err := sc.next()
	if err == io.EOF {
		return nil, errorf("empty file")
	}
	if err != nil {
		return nil, readErr(err)
	}
	headerLine := sc.start
	if len(rec) > MaxColumns {
		return nil, errorf("line %d: the header has %d columns, more than the limit of %d columns", headerLine, len(rec), MaxColumns)
	}
	header := make([]string, len(rec))
	for j, f := range rec {
		header[j] = string(f)
	}
	header[0] = strings.TrimPrefix(header[0], "\uFEFF")
	numeric := true
	index := make(map[string]int, len(header))
	units := make([]string, len(header))
	for j := range header {
		h := strings.TrimSpace(header[j])
		if h == "" {
			return nil, errorf("line %d: header column %d has no name", headerLine, j+1)
		}
		h, units[j], err = SplitUnit(h)
		if err != nil {
			return nil, errorf("line %d: column %d: %v", headerLine, j+1, err)
		}
		header[j] = h
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

	in, out, autoencoder, err := roleColumns(header, index, opt)
	if err != nil {
		return nil, errorf("%v", err)
	}
	truth := prefixed(header, "truth")
	labels := prefixed(header, "label")
	split, hasSplit := index["split"]
	unitOf, err := dataUnits(header, units, in, out, truth, autoencoder)
	if err != nil {
		return nil, errorf("line %d: %v", headerLine, err)
	}
	for _, j := range in {
		for _, k := range out {
			if j == k {
				return nil, errorf("column %q is both an input and an output", header[j])
			}
		}
	}

	maxRows := opt.maxRows()
	// The rows are kept in two parts as they are read, training and test,
	// so that the data set's order (training rows first) costs no copy.
	var parts [2]rowValues // [0] train, [1] test
	for i := range parts {
		parts[i].labels = make([][]string, len(labels))
	}
	intern := map[string]string{} // label text, held once however many rows repeat it
	rows := 0
	for {
		rec, err := sc.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, readErr(err)
		}
		line := sc.start
		rows++
		if rows == sizeRows && opt.sizeHint > 0 {
			// The rows to come, from the bytes per row so far, with a
			// margin: growing the arrays by doubling would hold up to
			// three times their values at once.
			est := float64(opt.sizeHint) / float64(sc.read) * float64(rows) * 1.03
			for i := range parts {
				parts[i].reserve(int(est*float64(parts[i].rows(len(out)))/float64(rows-1))+64, len(in), len(out), len(truth))
			}
		}
		if maxRows >= 0 && rows > maxRows {
			return nil, errorf("line %d: more data rows than the limit of %d rows (%s raises it)", line, maxRows, RowsFlag)
		}
		if len(rec) != len(header) {
			return nil, errorf("line %d: %d fields, header has %d", line, len(rec), len(header))
		}
		part := &parts[0]
		if hasSplit {
			switch v := bytes.TrimSpace(rec[split]); {
			case bytes.EqualFold(v, []byte("train")):
			case bytes.EqualFold(v, []byte("test")):
				part = &parts[1]
			default:
				return nil, errorf("line %d, column %d (\"split\"): %q, want train or test", line, split+1, wire.Truncate(strings.ToLower(string(v)), 20))
			}
		}
		for _, cols := range [3]struct {
			idx []int
			dst *[]float64
		}{{in, &part.x}, {out, &part.y}, {truth, &part.truth}} {
			for _, j := range cols.idx {
				v, msg := parseNumberBytes(bytes.TrimSpace(rec[j]))
				if msg != "" {
					return nil, errorf("line %d, column %d (%q): %s", line, j+1, header[j], msg)
				}
				*cols.dst = append(*cols.dst, v)
			}
		}
		for k, j := range labels {
			t := bytes.TrimSpace(rec[j])
			s, ok := intern[string(t)]
			if !ok {
				s = string(t)
				intern[s] = s
			}
			part.labels[k] = append(part.labels[k], s)
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
	if autoencoder {
		in = out
		for i := range parts {
			parts[i].x = parts[i].y
		}
	}
	train, test := &parts[0], &parts[1]
	nTrain := rows - test.rows(len(out))
	nTest := rows - nTrain
	if err := TooFewRows(nTrain); err != nil {
		if nTest > 0 {
			return nil, errorf("%v (held out: %s in the test split)", err, Count(nTest, "row"))
		}
		return nil, errorf("%v", err)
	}
	ds := &Dataset{
		Name:        "csv:" + name,
		Description: fmt.Sprintf("CSV file %s: %d rows, %d inputs, %d outputs", name, rows, len(in), len(out)),
		InputNames:  names(in),
		OutputNames: names(out),
		Shape:       opt.Shape,
	}
	ds.InputUnit, ds.OutputUnit, ds.TruthUnit = unitOf[0], unitOf[1], unitOf[2]
	ds.X, ds.Y = mat.NewDense(nTrain, len(in), train.x), mat.NewDense(nTrain, len(out), train.y)
	if autoencoder {
		ds.Y = mat.DenseCopyOf(ds.X)
		ds.Description = fmt.Sprintf("CSV file %s: %d rows of %d values, autoencoded", name, rows, len(out))
	}
	if nTest > 0 {
		ds.XTest = mat.NewDense(nTest, len(in), test.x)
		ds.YTest = mat.NewDense(nTest, len(out), test.y)
		if autoencoder {
			ds.YTest = mat.DenseCopyOf(ds.XTest)
		}
		ds.Description += fmt.Sprintf("; %d train / %d test rows", nTrain, nTest)
	}
	if len(truth) > 0 {
		ds.Truth, ds.TruthNames = mat.NewDense(rows, len(truth), append(train.truth, test.truth...)), names(truth)
	}
	for k, j := range labels {
		ds.Columns = append(ds.Columns, labelColumn(header[j], append(train.labels[k], test.labels[k]...)))
	}
	return ds, nil
}

// rowValues are the values of some rows of a file as they are read, row
// by row: inputs, outputs, ground truth and each label column's text.
type rowValues struct {
	x, y, truth []float64
	labels      [][]string
}

// sizeRows is the row after which readCSV sizes its arrays for the whole
// file, when it knows the file's size.
const sizeRows = 257

// reserve makes room for n rows of q inputs, d outputs and p truth values
// in all, unless n is beyond a billion values (an estimate gone wrong).
func (v *rowValues) reserve(n, q, d, p int) {
	if n <= 0 || n*(q+d+p) > 1<<30 {
		return
	}
	grow := func(s []float64, w int) []float64 { return slices.Grow(s, max(0, n*w-len(s))) }
	v.x, v.y, v.truth = grow(v.x, q), grow(v.y, d), grow(v.truth, p)
}

// rows returns the number of rows held, whose outputs are d wide.
func (v *rowValues) rows(d int) int { return len(v.y) / d }

// prefixed returns the indices of the header columns whose name starts
// with prefix.
func prefixed(header []string, prefix string) []int {
	var idx []int
	for j, h := range header {
		if strings.HasPrefix(h, prefix) {
			idx = append(idx, j)
		}
	}
	return idx
}

// labelColumn makes a column to colour by from its text per row: numbers
// when every row holds one, else categories in the order they first
// appear.
func labelColumn(name string, text []string) Column {
	c := Column{Name: name, Values: make([]float64, len(text))}
	numeric := true
	for _, t := range text {
		if _, msg := parseNumber(t); msg != "" {
			numeric = false
			break
		}
	}
	index := map[string]int{}
	for r, t := range text {
		if numeric {
			c.Values[r], _ = parseNumber(t)
			continue
		}
		k, ok := index[t]
		if !ok {
			k = len(c.Categories)
			index[t] = k
			c.Categories = append(c.Categories, t)
		}
		c.Values[r] = float64(k)
	}
	return c
}

// csvColumns returns the indices of the columns named in want or, when want
// is empty, of the columns whose name starts with prefix. kind ("input" or
// "output") names the role in errors.
// roleColumns returns the header's output and input columns
// (CSVConventions, or opt's), with autoencoder set and no inputs when the
// header has no input columns and opt names none; and checks that an image
// shape fits the outputs.
func roleColumns(header []string, index map[string]int, opt CSVOptions) (in, out []int, autoencoder bool, err error) {
	out, err = csvColumns(header, index, opt.OutputColumns, "y", "output")
	if err != nil {
		return nil, nil, false, err
	}
	in, err = csvColumns(header, index, opt.InputColumns, "x", "input")
	autoencoder = err != nil && len(opt.InputColumns) == 0
	if err != nil && !autoencoder {
		return nil, nil, false, err
	}
	if autoencoder {
		in = nil
	}
	if s := opt.Shape; s != [2]int{} && (s[0] < 1 || s[1] < 1 || s[0]*s[1] != len(out)) {
		return nil, nil, false, fmt.Errorf("images of %d × %d pixels need %d output columns; the file has %d", s[0], s[1], s[0]*s[1], len(out))
	}
	return in, out, autoencoder, nil
}

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
