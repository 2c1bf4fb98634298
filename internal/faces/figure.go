package faces

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// NewFigure is the latent figure of a fitted autoencoder of images (the
// paper's Frey faces figure): latent (N×2, every row's latent mean,
// copied) and, for grid > 0, grid × grid images that dec decodes on a
// lattice over the latent's range, of shape rows × columns, drawn black to
// white over rng (rng empty: over the decoded values' range). dec may be
// nil when grid is 0. The page's download and `viz figure faces` both draw
// it.
func NewFigure(latent *mat.Dense, dec *Decoder, grid int, shape [2]int, rng [2]float64) (*FigureData, error) {
	fig := &FigureData{Latent: mat.DenseCopyOf(latent), Height: shape[0], Width: shape[1], Lo: rng[0], Hi: rng[1]}
	if grid <= 0 {
		return fig, nil
	}
	px := shape[0] * shape[1]
	if _, d := dec.Dims(); d != px {
		return nil, fmt.Errorf("images of %d × %d pixels, but the decoder has %d outputs", shape[0], shape[1], d)
	}
	pts := Grid(fig.Latent, grid)
	g := len(pts) / 2
	mean, vr := make([]float64, g*px), make([]float64, g*px)
	if err := dec.Decode(pts, mean, vr); err != nil {
		return nil, err
	}
	if !(fig.Hi > fig.Lo) {
		fig.Lo, fig.Hi = slices.Min(mean), slices.Max(mean)
	}
	for i := range g {
		fig.Tiles = append(fig.Tiles, Tile{X: pts[2*i], Y: pts[2*i+1], Pixels: mean[i*px : (i+1)*px]})
	}
	return fig, nil
}
