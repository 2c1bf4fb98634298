package dataset

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

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
	// Name identifies the data set: "step", "robot" or "csv:<base name>".
	Name string
	// Description is one line for the UI, including the source or citation.
	Description string

	// X and Y are the training inputs (N×Q) and outputs (N×D).
	X, Y *mat.Dense
	// XTest and YTest are the held-out inputs and outputs, nil when there
	// is no held-out set.
	XTest, YTest *mat.Dense

	// InputNames and OutputNames name the columns of X (len Q) and Y (len D).
	InputNames, OutputNames []string

	// Positions holds, for robot data only (nil otherwise), the true robot
	// positions in metres, one row (x, y) per scan: the training scans
	// first, then the test scans, aligned with the rows of X then XTest.
	// They are for display and judging only, never for fitting.
	Positions *mat.Dense
	// Filled is, for robot data only (nil otherwise), true at [i][d] where
	// the reading of access point d was missing from scan i and was filled
	// with RobotMissingDBm. Rows are aligned like Positions.
	Filled [][]bool
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

func newLimitReader(r io.Reader) *limitReader {
	return &limitReader{r: r, n: maxFileSize}
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

// sizeError describes errTooLarge for the source src.
func sizeError(src string) error {
	return fmt.Errorf("dataset: %s: input larger than %d bytes (MaxFileSize)", src, maxFileSize)
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
