package dataset

import (
	"fmt"
	"io"

	"gonum.org/v1/gonum/mat"
)

// Frey faces conventions (Brendan Frey's video frames, frey_rawface.mat as
// distributed by Sam Roweis, used by Hensman & Lawrence 2014 for the
// autoencoding deep GP).
const (
	// FreyHeight and FreyWidth are the rows and columns of one frame.
	FreyHeight = 28
	FreyWidth  = 20
	// FreyPixels is the number of pixels of a frame, FreyHeight·FreyWidth;
	// pixel k is at row k/FreyWidth and column k%FreyWidth.
	FreyPixels = FreyHeight * FreyWidth
	// FreyVariable is the name of the variable holding the frames.
	FreyVariable = "ff"
)

// LoadFrey reads the Frey faces MAT-file at path; see ReadFrey. The data
// set's Source is the public file when path holds it (loadFile).
func LoadFrey(path string) (*Dataset, error) { return loadFile("frey", path, readFrey) }

// ReadFrey reads the Frey faces from a MAT-file (see ReadMAT) holding the
// variable "ff": FreyPixels rows, one column per frame, in time order, grey
// levels 0–255.
//
// The data set is autoencoding: X and Y are the same N×FreyPixels matrix of
// grey levels, one frame per row in time order (frame index = row). There is
// no held-out set. Column names are "r<row>c<col>" of each pixel.
func ReadFrey(r io.Reader) (*Dataset, error) { return readFrey(r, "frey") }

func readFrey(r io.Reader, src string) (*Dataset, error) {
	vars, err := ReadMAT(r)
	if err != nil {
		return nil, fmt.Errorf("%w (reading %s)", err, src)
	}
	var ff *MATMatrix
	for i := range vars {
		if vars[i].Name == FreyVariable {
			ff = &vars[i]
		}
	}
	if ff == nil {
		return nil, fmt.Errorf("%s: no variable %q in the MAT-file", src, FreyVariable)
	}
	if ff.Rows != FreyPixels {
		return nil, fmt.Errorf("%s: variable %q is %d×%d, want %d rows (28×20 pixels per frame)", src, FreyVariable, ff.Rows, ff.Cols, FreyPixels)
	}
	if ff.Cols < 2 {
		return nil, fmt.Errorf("%s: %d frames, want at least 2", src, ff.Cols)
	}
	if ff.Cols > MaxRows {
		return nil, fmt.Errorf("%s: %d frames, more than the limit %d", src, ff.Cols, MaxRows)
	}
	for k, v := range ff.Data {
		if v < 0 || v > 255 {
			return nil, fmt.Errorf("%s: frame %d pixel %d is %g, outside the grey levels 0–255", src, k/FreyPixels+1, k%FreyPixels+1, v)
		}
	}
	// Column j of ff is frame j: row j of the data set, so the column-major
	// data are already the row-major N×FreyPixels matrix.
	pix := mat.NewDense(ff.Cols, FreyPixels, ff.Data)
	names := make([]string, FreyPixels)
	for k := range names {
		names[k] = fmt.Sprintf("r%dc%d", k/FreyWidth, k%FreyWidth)
	}
	return &Dataset{
		Name: "frey",
		Description: fmt.Sprintf("Frey faces: %d frames of 28×20 grey levels from a video, autoencoded (X = Y); "+
			"B. Frey's frames as distributed by S. Roweis; used by Hensman & Lawrence (2014)", ff.Cols),
		X:           pix,
		Y:           mat.DenseCopyOf(pix),
		InputNames:  names,
		OutputNames: names,
		InputUnit:   "grey level",
		OutputUnit:  "grey level",
		RowName:     "frame",
		Shape:       [2]int{FreyHeight, FreyWidth},
		Range:       [2]float64{0, 255},
	}, nil
}
