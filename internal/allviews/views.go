// Package allviews chooses a data set's view by what the data are: outputs
// that are the inputs make an autoencoder, several outputs the latent
// explorer, one output a regression (see dgpviz/internal/view). It is the
// one place that knows every view.
package allviews

import (
	"slices"

	"dgpviz/internal/dataset"
	"dgpviz/internal/view"
	"dgpviz/internal/view/autoencoder"
	"dgpviz/internal/view/explorer"
	"dgpviz/internal/view/regression"
)

// Kind returns the kind of view that shows ds.
func Kind(ds *dataset.Dataset) string {
	switch {
	case autoencoder.Applies(ds):
		return autoencoder.Kind
	case explorer.Applies(ds):
		return explorer.Kind
	default:
		return regression.Kind
	}
}

// For returns a new view of ds for one session of a server with env.
func For(ds *dataset.Dataset, env *view.Env) view.View {
	switch Kind(ds) {
	case autoencoder.Kind:
		return autoencoder.New()
	case explorer.Kind:
		return explorer.New(env)
	default:
		return regression.New()
	}
}

// Figures lists the figures of every view by name, each once, for the
// download handler's "unknown figure".
func Figures() []view.Figure {
	var out []view.Figure
	for _, v := range []view.View{regression.New(), explorer.New(nil), autoencoder.New()} {
		for _, f := range v.Figures() {
			if !slices.ContainsFunc(out, func(g view.Figure) bool { return g.Name == f.Name }) {
				out = append(out, f)
			}
		}
	}
	return out
}

// Ops lists the ops of every view, for the command table.
func Ops() []string {
	return view.OpNames(regression.New(), explorer.New(nil), autoencoder.New())
}
