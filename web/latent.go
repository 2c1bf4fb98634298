package web

import (
	"bytes"
	"errors"
	"net/url"

	"dgpviz/internal/latent"
	"dgpviz/internal/slides"
	"dgpviz/internal/stream"
)

// latentExport writes the session's latent coordinates — every layer's
// message at the training inputs — as CSV, or the latent-space figure
// (hidden layers with ≥ 2 dimensions, coloured by the first input, with the
// true path when the data set has one) as svg, png or pdf.
//
//	GET /figure/latent.{csv,svg,png,pdf}?session=KEY
func latentExport(buf *bytes.Buffer, format string, fs *stream.FigureSession, q url.Values) error {
	for _, k := range []string{"layer", "inputs", "preset", "samples", "units", "grid"} {
		if q.Has(k) {
			return bad("parameter %q does not apply to the latent export", k)
		}
	}
	if fs.Data == nil {
		return bad("the session has no data set yet")
	}
	if format == "csv" {
		t, err := latent.ModelTable(fs.Model, fs.Data, fs.NormX, fs.NormY)
		if err != nil {
			return err
		}
		return latent.WriteCSV(buf, t)
	}
	f, err := latent.ModelFigure(fs.Model, fs.Data)
	if errors.Is(err, latent.ErrNoLatent) {
		return bad("the model has no hidden layer with 2 or more dimensions to draw")
	}
	if err != nil {
		return err
	}
	if slideShape(q) {
		return slides.Latent(buf, format, f, captionOf(fs, ""))
	}
	return latent.RenderFigure(buf, format, f)
}
