package dataset

import (
	"dgpviz/internal/wire"
	"fmt"
	"strconv"
	"strings"
)

// maxImageSide bounds each side of an image shape.
const maxImageSide = 4096

// ParseShape reads an image shape written "HxW" (rows × columns, e.g.
// "28x20"; "×" and "X" serve too).
func ParseShape(s string) ([2]int, error) {
	t := strings.NewReplacer("×", "x", "X", "x").Replace(strings.TrimSpace(s))
	h, w, ok := strings.Cut(t, "x")
	if ok {
		r, err1 := strconv.Atoi(strings.TrimSpace(h))
		c, err2 := strconv.Atoi(strings.TrimSpace(w))
		if err1 == nil && err2 == nil && r >= 1 && c >= 1 && r <= maxImageSide && c <= maxImageSide {
			return [2]int{r, c}, nil
		}
	}
	return [2]int{}, fmt.Errorf("image shape %q: want rows x columns, such as 28x20, each 1…%d", wire.Truncate(s, 20), maxImageSide)
}

// SetShape declares ds's outputs the pixels of images of the given shape,
// row by row; the outputs must number rows × columns.
func (ds *Dataset) SetShape(shape [2]int) error {
	_, d := ds.Y.Dims()
	if shape[0]*shape[1] != d {
		return fmt.Errorf("images of %d × %d pixels need %d outputs; %s has %d", shape[0], shape[1], shape[0]*shape[1], ds.Name, d)
	}
	ds.Shape = shape
	return nil
}
