package dataset

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"unsafe"

	"gonum.org/v1/gonum/mat"
)

// Limits on the inputs accepted by the loaders.
const (
	// MaxRows is the largest number of data rows (CSV) or readings (robot
	// lines) a file may hold.
	MaxRows = 100000
	// MaxColumns is the largest number of columns (CSV header fields or
	// distinct robot access points) a file may hold.
	MaxColumns = 1000
	// MaxFileSize is the largest number of bytes a loader reads; it is
	// checked while reading, so it also applies to streams.
	MaxFileSize = 64 << 20
)

// Dataset is a regression data set in its original units.
type Dataset struct {
	// Name identifies the data set in the catalogue: "step", "robot",
	// "frey" or "csv:<base name>". Nothing but a reader chooses by it.
	Name string
	// Description is one line for the UI, including the source or citation.
	Description string
	// Title is what people call the data (an uploaded file's name) when
	// Name is not it (an upload's private name); "" when Name is.
	Title string

	// X and Y are the training inputs (N×Q) and outputs (N×D).
	X, Y *mat.Dense
	// XTest and YTest are the held-out inputs and outputs, nil when there
	// is no held-out set.
	XTest, YTest *mat.Dense

	// InputNames and OutputNames name the columns of X (len Q) and Y (len D).
	InputNames, OutputNames []string

	// InputUnit and OutputUnit name the units of X and Y ("s", "dBm",
	// "grey level"); "" when the data do not say.
	InputUnit, OutputUnit string
	// RowName is what one row is called ("scan", "frame"); "" for "row".
	RowName string

	// Truth holds, when the data carry it (nil otherwise), ground-truth
	// coordinates of every row — the training rows, then the test rows —
	// for judging and colouring a latent space, never for fitting: the
	// robot's true position. TruthNames name its columns as a CSV names
	// them ("truth_x"), TruthUnit gives their unit ("m").
	Truth      *mat.Dense
	TruthNames []string
	TruthUnit  string
	// Columns are further values per row (rows aligned like Truth's), for
	// colouring only, never fitted.
	Columns []Column
	// Source is the public data file (one of Remotes) the data set was
	// read from, its checksum checked (LoadRobot, LoadFrey); nil for other data.
	// A model file of such data may refer to the file instead of holding
	// the data (docs/model-format.md).
	Source *Remote
	// Path is the file the data were read from, absolute (LoadWith sets
	// it), so that a model file can find them again from any folder; ""
	// for data that are not a file's (the step, an upload).
	Path string
	// Imputed is, when some outputs were missing and filled in (nil
	// otherwise), true at [i][j] where output j of row i was; rows are
	// aligned like Truth's. The robot's missing readings are −92 dBm.
	Imputed [][]bool
	// Shape is the image shape (rows, columns) of every output row when
	// the outputs are the pixels of an image, row by row (pixel k at row
	// k / Shape[1], column k % Shape[1]); zero otherwise.
	Shape [2]int
	// Range is the outputs' nominal range (0–255 grey levels), drawn from
	// black to white; zero when the data do not say.
	Range [2]float64
}

// Column is a named value per row of a data set, for colouring. A
// categorical column has Categories, and its values are indices into them.
type Column struct {
	Name       string
	Values     []float64
	Categories []string
}

// Rows returns the number of rows of ds: training rows, then test rows.
func (ds *Dataset) Rows() (train, test int) {
	train, _ = ds.X.Dims()
	if ds.XTest != nil {
		test, _ = ds.XTest.Dims()
	}
	return train, test
}

// IsAutoencoder reports whether the outputs are the inputs: the same
// columns with the same values.
func (ds *Dataset) IsAutoencoder() bool {
	if ds == nil || ds.X == nil || ds.Y == nil {
		return false
	}
	return ds.X == ds.Y || mat.Equal(ds.X, ds.Y)
}

// maxFileSize is the limit enforced by limitReader; a variable so tests can
// exercise the limit without generating 64 MiB.
var maxFileSize int64 = MaxFileSize

// errTooLarge is returned by a limitReader that has read more than its limit.
var errTooLarge = errors.New("input larger than the maximum file size")

// limitReader reads from r and fails with errTooLarge once more than n bytes
// have been read in total.
type limitReader struct {
	r io.Reader
	n int64 // bytes still allowed
}

// newLimitReader returns r limited to n bytes; a negative n: r itself.
func newLimitReader(r io.Reader, n int64) io.Reader {
	if n < 0 {
		return r
	}
	return &limitReader{r: r, n: n}
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n < 0 {
		return 0, errTooLarge
	}
	// Read at most one byte beyond the limit to detect overflow.
	if int64(len(p)) > l.n+1 {
		p = p[:l.n+1]
	}
	k, err := l.r.Read(p)
	l.n -= int64(k)
	if l.n < 0 {
		return 0, errTooLarge
	}
	return k, err
}

// openError describes a file that cannot be opened or read without Go's
// vocabulary ("open PATH: …", "read PATH: …").
func openError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("cannot read %s: %w", pe.Path, pe.Err)
	}
	return err
}

// openSized opens the file at path for a loader, with its size in bytes
// (0 when it is not a regular file, such as a pipe: the CSV and .npy
// readers then grow their arrays as they read).
func openSized(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, openError(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, openError(err)
	}
	if !fi.Mode().IsRegular() {
		return f, 0, nil
	}
	return f, fi.Size(), nil
}

// sizeError describes errTooLarge, past a limit of n bytes, for the
// source src.
func sizeError(src string, n int64) error {
	if n%(1<<20) == 0 {
		return fmt.Errorf("%s: larger than the limit of %d MiB", src, n>>20)
	}
	return fmt.Errorf("%s: larger than the limit of %d bytes", src, n)
}

// MaxAbsValue bounds the magnitude of every data value: the model
// standardises columns and squares their deviations, which overflow for
// values near the largest float64 (1e308), so larger values are refused
// with a clear error instead of turning into infinities later.
const MaxAbsValue = 1e150

// parseNumber parses a finite floating-point number of magnitude at most
// MaxAbsValue. On failure it returns a description of the problem suitable
// for an error message.
func parseNumber(s string) (float64, string) {
	v, err := strconv.ParseFloat(s, 64)
	return numberVerdict(s, v, err)
}

// parseNumberBytes is parseNumber of the text b, which it reads in place:
// a file's numbers are parsed without a copy.
func parseNumberBytes(b []byte) (float64, string) {
	if len(b) == 0 {
		return parseNumber("")
	}
	if v, ok := fastFloat(b); ok {
		return v, ""
	}
	v, err := strconv.ParseFloat(unsafe.String(&b[0], len(b)), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > MaxAbsValue {
		return parseNumber(string(b)) // the message, from a copy: err holds b's text
	}
	return v, ""
}

// pow10 are the powers of ten that a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// fastFloat parses the common decimal numbers of data files ("-61.25",
// "3e-4") whose digits make an integer of at most 2⁵³ and whose scale is
// at most 10²²: both are exact in a float64, so that one multiplication
// or division rounds correctly (Clinger's fast path) and the value is
// ParseFloat's. Other text, ok false, is left to ParseFloat.
func fastFloat(b []byte) (v float64, ok bool) {
	i, neg := 0, false
	if b[0] == '-' || b[0] == '+' {
		neg, i = b[0] == '-', 1
	}
	var mant uint64
	digits, exp := 0, 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		mant = mant*10 + uint64(b[i]-'0')
		digits++
	}
	if i < len(b) && b[i] == '.' {
		for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			mant = mant*10 + uint64(b[i]-'0')
			digits++
			exp--
		}
	}
	if digits == 0 || digits > 15 { // 15 digits stay below 2⁵³
		return 0, false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '-' || b[i] == '+') {
			eneg = b[i] == '-'
			i++
		}
		e, ed := 0, 0
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9' && ed < 4; i++ {
			e = e*10 + int(b[i]-'0')
			ed++
		}
		if ed == 0 {
			return 0, false
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(b) || exp < -22 || exp > 22 {
		return 0, false
	}
	v = float64(mant)
	if exp < 0 {
		v /= pow10[-exp]
	} else {
		v *= pow10[exp]
	}
	if v > MaxAbsValue { // cannot happen below 1e37, kept for the rule's sake
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// numberVerdict is parseNumber's verdict on s, which ParseFloat read as v, err.
func numberVerdict(s string, v float64, err error) (float64, string) {
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return 0, fmt.Sprintf("%q is out of range", s)
		}
		if s == "" {
			return 0, "empty value"
		}
		return 0, fmt.Sprintf("%q is not a number", s)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Sprintf("%q is not a finite number", s)
	}
	if math.Abs(v) > MaxAbsValue {
		return 0, fmt.Sprintf("%q is too large (|value| ≤ %g: standardising squares the deviations)", s, MaxAbsValue)
	}
	return v, ""
}

// MinTrainRows is the fewest training rows a data set may have: one row
// has no spread to standardise by and a GP fitted to one point says
// nothing. The readers refuse fewer (TooFewRows), so viz fit and the page
// agree; the page's edits keep as many.
const MinTrainRows = 2

// TooFewRows is nil for n ≥ MinTrainRows training rows, else the error
// that says why the data cannot be fitted.
func TooFewRows(n int) error {
	if n >= MinTrainRows {
		return nil
	}
	return fmt.Errorf("%s: a fit needs at least %d", Count(n, "training row"), MinTrainRows)
}

// Count is n and the noun, singular for one: "1 row", "3 rows".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
