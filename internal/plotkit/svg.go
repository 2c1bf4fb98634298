package plotkit

import (
	"bytes"
	"io"

	"gonum.org/v1/plot/vg/vgsvg"
)

// svgFallbacks name, for each font family the figures draw in, the generic
// family a viewer without the Liberation fonts should use instead: vgsvg
// names the family alone, and a viewer that lacks it may fall back to a
// font of another kind.
var svgFallbacks = [][2]string{
	{"font-family:Liberation Serif;", "font-family:'Liberation Serif',serif;"},
	{"font-family:Liberation Sans;", "font-family:'Liberation Sans',sans-serif;"},
	{"font-family:Liberation Mono;", "font-family:'Liberation Mono',monospace;"},
}

// svgCanvas writes vgsvg's document with the fonts' generic fallbacks.
type svgCanvas struct{ *vgsvg.Canvas }

func (c svgCanvas) WriteTo(w io.Writer) (int64, error) {
	var buf bytes.Buffer
	if _, err := c.Canvas.WriteTo(&buf); err != nil {
		return 0, err
	}
	doc := buf.Bytes()
	for _, f := range svgFallbacks {
		doc = bytes.ReplaceAll(doc, []byte(f[0]), []byte(f[1]))
	}
	n, err := w.Write(doc)
	return int64(n), err
}
