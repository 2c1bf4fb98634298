package main

import (
	"errors"

	"dgpviz/internal/stream"
)

// errFreyServe refuses `viz serve -data frey:PATH`: the live page's generic
// frames carry every layer's messages for every datum, 1965 × 560 per frame
// for the Frey faces, and the Frey view that streams only the latent and
// sends faces on demand is not built yet.
var errFreyServe = errors.New("viz serve: the Frey faces have no live view yet (its frames would carry 1965 × 560 messages each); " +
	"fit with `viz fit -data frey:PATH -hidden 2` and reconstruct faces with `viz predict -model FILE -in faces.csv`")

// checkFreyServe returns errFreyServe when one of the offered data sets is
// the Frey faces.
func checkFreyServe(specs []string, cat *stream.Catalog) error {
	for _, s := range specs {
		if ds := cat.Get(cat.NameOf(s)); ds != nil && ds.Name == "frey" {
			return errFreyServe
		}
	}
	return nil
}
