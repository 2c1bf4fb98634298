package web

import (
	"bytes"
	"fmt"
	"net/url"
	"strconv"

	"dgpviz/internal/engine"
	"dgpviz/internal/faces"
	"dgpviz/internal/stream"
)

// facesGridDefault and facesGridMax bound the face tiles of the Frey
// figure: grid × grid decoded faces.
const (
	facesGridDefault = 7
	facesGridMax     = 20
)

// facesExport writes the Frey faces view's latent figure with face tiles
// (faces.Render: every frame's latent mean coloured by frame index with a
// "frame in the video" colour bar, decoded faces on a grid) as svg, png
// or pdf, or the latent coordinates of every frame as CSV.
//
//	GET /figure/faces.{svg,png,pdf,csv}?session=KEY[&grid=G]
func facesExport(buf *bytes.Buffer, format string, fs *stream.FigureSession, q url.Values) error {
	for _, k := range []string{"layer", "inputs", "preset", "samples", "units"} {
		if q.Has(k) {
			return bad("parameter %q does not apply to the faces figure", k)
		}
	}
	if !stream.IsFrey(fs.Data) {
		return bad("the faces figure needs the Frey faces data set (this session has %q)", fs.Dataset)
	}
	grid := facesGridDefault
	if v := q.Get("grid"); q.Has("grid") {
		g, err := strconv.Atoi(v)
		if err != nil || g < 0 || g > facesGridMax {
			return bad("grid %q: want a whole number of faces per side, 0…%d", v, facesGridMax)
		}
		if format == "csv" {
			return bad("grid does not apply to the latent CSV")
		}
		grid = g
	}
	m := fs.Model
	if len(m.Layers) < 2 {
		return bad("the model has no hidden layer")
	}
	if _, lq, _ := m.Layers[len(m.Layers)-1].Dims(); lq != 2 || len(m.Layers) != 2 {
		return bad("the faces figure needs the autoencoder 560 → 2 → 560 (this model has %d layers, a %d-D last hidden layer)", len(m.Layers), lq)
	}
	ev := engine.Evaluator{Workers: 1}
	msgs, err := ev.PredictLayers(m, m.X, 1)
	if err != nil {
		return fmt.Errorf("web: faces: %w", err)
	}
	lat := msgs[0]
	n, _ := lat.Mean.Dims()
	if format == "csv" {
		buf.WriteString("frame,latent1_mean,latent2_mean,latent1_var,latent2_var\n")
		for i := range n {
			fmt.Fprintf(buf, "%d,%s,%s,%s,%s\n", i, ff(lat.Mean.At(i, 0)), ff(lat.Mean.At(i, 1)), ff(lat.Var.At(i, 0)), ff(lat.Var.At(i, 1)))
		}
		return nil
	}
	var dec *faces.Decoder
	if grid > 0 {
		if dec, err = faces.NewDecoder(m, fs.NormY); err != nil {
			return bad("%v", err)
		}
	}
	fig, err := faces.NewFigure(lat.Mean, dec, grid)
	if err != nil {
		return fmt.Errorf("web: faces: %w", err)
	}
	return faces.Render(buf, format, fig)
}

func ff(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
