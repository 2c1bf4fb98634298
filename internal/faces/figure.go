package faces

import (
	"dgpviz/internal/dataset"

	"gonum.org/v1/gonum/mat"
)

// NewFigure is the Frey figure of a fitted autoencoder: latent (N×2, every
// frame's latent mean, copied) and, for grid > 0, grid × grid faces that
// dec decodes on a lattice over the latent's range, in grey levels 0…255.
// dec may be nil when grid is 0. The page's download and `viz figure
// frey` both draw it.
func NewFigure(latent *mat.Dense, dec *Decoder, grid int) (*Figure, error) {
	fig := &Figure{Latent: mat.DenseCopyOf(latent), Height: dataset.FreyHeight, Width: dataset.FreyWidth, Lo: 0, Hi: 255}
	if grid <= 0 {
		return fig, nil
	}
	pts := Grid(fig.Latent, grid)
	g := len(pts) / 2
	mean, vr := make([]float64, g*dataset.FreyPixels), make([]float64, g*dataset.FreyPixels)
	if err := dec.Decode(pts, mean, vr); err != nil {
		return nil, err
	}
	for i := range g {
		fig.Tiles = append(fig.Tiles, Tile{X: pts[2*i], Y: pts[2*i+1], Pixels: mean[i*dataset.FreyPixels : (i+1)*dataset.FreyPixels]})
	}
	return fig, nil
}
