package main

import (
	"io"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/faces"
)

// runFigureFaces draws the latent figure of an autoencoder of images (the
// paper's Frey faces figure, for any images): every training row's latent
// mean coloured by its row, with decoded images on a grid. The images'
// shape comes from -shape, else the model file (data.shape), else the data
// set it records.
func runFigureFaces(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("figure faces", stderr)
	path := fs.String("model", "", "model file of an autoencoder of images with one 2-D hidden layer (viz fit -hidden 2)")
	shapeFlag := fs.String("shape", "", "the images' shape, rows x columns (e.g. 28x20); default: as the model file or its data set says")
	grid := fs.Int("grid", 6, "decoded images on a grid × grid of latent positions (0: none)")
	out := fs.String("o", "", "output file (.svg, .png or .pdf; - for stdout)")
	format := fs.String("format", "", "svg, png or pdf (default: from -o)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *path == "" || *out == "" {
		return badInput("viz figure faces: -model FILE and -o FILE are required")
	}
	if *grid < 0 || *grid > 20 {
		return badInput("viz figure faces: -grid %d: want 0…20", *grid)
	}
	f, err := figureFormat(*out, *format)
	if err != nil {
		return err
	}
	mf, err := readModelFile("viz figure faces", *path)
	if err != nil {
		return err
	}
	m := mf.Model
	_, d := m.Y.Dims()
	if len(m.Layers) != 2 {
		return badInput("viz figure faces: %s has %s; the figure needs an autoencoder with one 2-D hidden layer", *path, plural(len(m.Layers), "layer"))
	}
	if _, lq, _ := m.Layers[1].Dims(); lq != 2 {
		return badInput("viz figure faces: %s has a %d-D hidden layer; the figure needs an autoencoder with one 2-D hidden layer", *path, lq)
	}
	info := dataInfo(mf)
	shape := info.Shape
	if *shapeFlag != "" {
		if shape, err = dataset.ParseShape(*shapeFlag); err != nil {
			return badInput("viz figure faces: -shape: %v", err)
		}
	}
	switch {
	case shape == [2]int{}:
		return badInput("viz figure faces: %s does not say its images' shape: give it with -shape ROWSxCOLUMNS (%d pixels)", *path, d)
	case shape[0]*shape[1] != d:
		return badInput("viz figure faces: images of %d × %d pixels need %d outputs; %s has %d", shape[0], shape[1], shape[0]*shape[1], *path, d)
	}
	var ev engine.Evaluator
	msgs, err := ev.PredictLayers(m, m.X, 1)
	if err != nil {
		return badInput("viz figure faces: %v", err)
	}
	var dec *faces.Decoder
	if *grid > 0 {
		if dec, err = faces.NewDecoder(m, mf.NormY); err != nil {
			return badInput("viz figure faces: %v", err)
		}
	}
	fig, err := faces.NewFigure(msgs[0].Mean, dec, *grid, shape, info.Range)
	if err != nil {
		return badInput("viz figure faces: %v", err)
	}
	return writeFigure(*out, stdout, func(w io.Writer) error { return faces.Render(w, f, fig) })
}
