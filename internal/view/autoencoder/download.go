package autoencoder

import (
	"bytes"
	"fmt"
	"net/url"
	"strconv"

	"dgpviz/internal/engine"
	"dgpviz/internal/faces"
	"dgpviz/internal/slides"
	"dgpviz/internal/view"
)

// facesGridDefault and facesGridMax bound the image tiles of the faces
// figure: grid × grid decoded images.
const (
	facesGridDefault = 7
	facesGridMax     = 20
)

// Figures: the faces map, and every view's.
func (*View) Figures() []view.Figure {
	return append([]view.Figure{{Name: "faces", CSV: true, Draw: facesFigure}}, view.CommonFigures()...)
}

// facesFigure writes an autoencoder of images' latent figure with image
// tiles (faces.Render: every row's latent mean coloured by its index, with
// a colour bar, decoded images on a grid) as svg, png or pdf, or the
// latent coordinates of every row as CSV (rows counted from 1; the grid,
// which the CSV does not use, is ignored there, so that one link serves
// every format).
//
//	GET /figure/faces.{svg,png,pdf,csv}?session=KEY[&grid=G]
func facesFigure(buf *bytes.Buffer, format string, d *view.Download, q url.Values) error {
	for _, k := range []string{"layer", "inputs", "preset", "samples", "units"} {
		if q.Has(k) {
			return view.Bad("parameter %q does not apply to the faces figure", k)
		}
	}
	if d.Data.Shape[0] == 0 {
		return view.Bad("the faces figure needs images shown as an autoencoder (this session's data have no image shape)")
	}
	grid := facesGridDefault
	if v := q.Get("grid"); q.Has("grid") {
		g, err := strconv.Atoi(v)
		if err != nil || g < 0 || g > facesGridMax {
			return view.Bad("grid %q: want a whole number of faces per side, 0…%d", v, facesGridMax)
		}
		grid = g
	}
	m := d.Model
	if len(m.Layers) < 2 {
		return view.Bad("the model has no hidden layer")
	}
	if _, lq, _ := m.Layers[len(m.Layers)-1].Dims(); lq != 2 || len(m.Layers) != 2 {
		return view.Bad("the faces figure needs an autoencoder with one 2-D hidden layer (this model has %d layers, a %d-D last hidden layer)", len(m.Layers), lq)
	}
	ev := engine.Evaluator{Workers: 1}
	msgs, err := ev.PredictLayers(m, m.X, 1)
	if err != nil {
		return err
	}
	lat := msgs[0]
	n, _ := lat.Mean.Dims()
	if format == "csv" {
		buf.WriteString("row,layer1_dim1_mean [latent],layer1_dim2_mean [latent],layer1_dim1_var [latent],layer1_dim2_var [latent]\n") // dataset.LayerColumns
		for i := range n {
			fmt.Fprintf(buf, "%d,%s,%s,%s,%s\n", i+1, ff(lat.Mean.At(i, 0)), ff(lat.Mean.At(i, 1)), ff(lat.Var.At(i, 0)), ff(lat.Var.At(i, 1)))
		}
		return nil
	}
	var dec *faces.Decoder
	if grid > 0 {
		if dec, err = faces.NewDecoder(m, d.NormY); err != nil {
			return view.Bad("%v", err)
		}
	}
	fig, err := faces.NewFigure(lat.Mean, dec, grid, d.Data.Shape, d.Data.Range)
	if err != nil {
		return err
	}
	fig.RowName = d.Data.RowName
	if view.SlideShape(q) {
		return slides.Faces(buf, format, fig, d.Caption(""))
	}
	return faces.Render(buf, format, fig)
}

func ff(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
