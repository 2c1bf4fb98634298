package main

import "dgpviz/internal/stream"

// freyDefaults opens `viz serve -data frey:PATH` straight into the Frey
// faces view with the preset "Frey faces autoencoder (paper)": when the
// default data set is the Frey faces and -hidden and -inducing were not
// given, 560 → 2 → 560 with train.FreyInducing inducing points.
func freyDefaults(o serveOptions, cat *stream.Catalog) stream.Config {
	if !stream.IsFrey(cat.Get(o.cfg.Dataset)) || o.set["hidden"] || o.set["inducing"] {
		return o.cfg
	}
	return stream.FreyConfig(o.cfg, o.limits)
}

// freyLimits raises the per-session memory budget to the Frey preset's
// estimate (stream.FreyLimits) when a data set offered is the Frey faces
// and -session-memory was not given.
func freyLimits(o serveOptions, cat *stream.Catalog) stream.Limits {
	if o.set["session-memory"] {
		return o.limits
	}
	l := o.limits
	for _, name := range cat.Names() {
		l = stream.FreyLimits(l, cat.Get(name))
	}
	return l
}
