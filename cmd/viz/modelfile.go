package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// What the commands that read a model file share: reading it with errors
// that name the file, the data set it records, and the units its numbers
// are printed in.

// readModelFile reads a model file for command cmd ("viz predict"); a
// file that cannot be read or is not a model file is bad input.
func readModelFile(cmd, path string) (*engine.ModelFile, error) {
	mf, err := engine.ReadModelFile(path)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe):
		return nil, badInput("%s: cannot read %s: %v", cmd, path, pe.Err)
	case err != nil:
		return nil, badInput("%s: %s: %v", cmd, path, err)
	}
	return mf, nil
}

// recordedData returns the data set a model file records (its dataset
// section's spec, as viz fit writes it, or a name that Load knows, as the
// page's Save model writes it), or "" when it records none that can be
// loaded again.
func recordedData(mf *engine.ModelFile) string {
	var d struct {
		Name string `json:"name"`
		Spec string `json:"spec"`
	}
	if json.Unmarshal(mf.Extra["dataset"], &d) != nil {
		return ""
	}
	if d.Spec != "" {
		return d.Spec
	}
	if _, ok := dataset.RemoteNamed(d.Name); ok || d.Name == "step" {
		return d.Name
	}
	return ""
}

// dataInfo returns what mf says of its data (units, image shape); a file
// that says nothing (older files, viz fit's) takes it from the data set it
// records when that can be loaded.
func dataInfo(mf *engine.ModelFile) engine.DataInfo {
	if mf.Info != (engine.DataInfo{}) {
		return mf.Info
	}
	if spec := recordedData(mf); spec != "" {
		if ds, err := dataset.Load(spec); err == nil && sameColumns(mf, ds) {
			return engine.InfoOf(ds)
		}
	}
	return engine.DataInfo{}
}

// sameColumns reports whether ds has the columns of mf's data.
func sameColumns(mf *engine.ModelFile, ds *dataset.Dataset) bool {
	_, q := mf.Model.X.Dims()
	_, d := mf.Model.Y.Dims()
	_, dq := ds.X.Dims()
	_, dd := ds.Y.Dims()
	return q == dq && d == dd
}

// modelDataset loads the data set of a model file: spec, or when spec is
// "" the one the file refers to (already loaded) or records. It checks that the data set's training
// rows are the model's data, so that its ground truth and test split
// belong to them.
func modelDataset(cmd, path string, mf *engine.ModelFile, spec string) (*dataset.Dataset, string, error) {
	ds := mf.Data // the data set the file refers to, loaded as it was read
	if spec != "" || ds == nil {
		if spec == "" {
			if spec = recordedData(mf); spec == "" {
				return nil, "", badInput("%s: %s does not say which data set it was fitted to: give it with -data (robot, frey, csv:PATH, …)", cmd, path)
			}
		}
		var err error
		if ds, err = dataset.Load(spec); err != nil {
			return nil, spec, badInput("%s: -data %s: %v", cmd, spec, err)
		}
	} else if spec = recordedData(mf); spec == "" {
		spec = ds.Name
	}
	if err := sameData(mf, ds); err != nil {
		return nil, spec, badInput("%s: %s was not fitted to the data set %s: %v (give its data set with -data)", cmd, path, spec, err)
	}
	return ds, spec, nil
}

// sameDataRows is how many rows sameData normalises at a time.
const sameDataRows = 16384

// sameData checks that ds's training rows, normalised as the model file's
// data were, are the model's data.
func sameData(mf *engine.ModelFile, ds *dataset.Dataset) error {
	n, q := mf.Model.X.Dims()
	_, d := mf.Model.Y.Dims()
	dn, dq := ds.X.Dims()
	_, dd := ds.Y.Dims()
	if n != dn || q != dq || d != dd {
		return fmt.Errorf("the model has %d rows of %d inputs and %d outputs, the data set %d rows of %d and %d", n, q, d, dn, dq, dd)
	}
	for _, c := range []struct {
		name        string
		model, orig *mat.Dense
		norm        dataset.Normalizer
	}{{"input", mf.Model.X, ds.X, mf.NormX}, {"output", mf.Model.Y, ds.Y, mf.NormY}} {
		// Normalised a chunk of rows at a time: a copy of a million rows'
		// outputs would double viz latent's largest array.
		_, cols := c.orig.Dims()
		for lo := 0; lo < n; lo += sameDataRows {
			hi := min(n, lo+sameDataRows)
			data := c.norm.Apply(c.orig.Slice(lo, hi, 0, cols).(*mat.Dense))
			for i := lo; i < hi; i++ {
				for j := range cols {
					a, b := c.model.At(i, j), data.At(i-lo, j)
					if math.Abs(a-b) > 1e-9*math.Max(1, math.Abs(b)) {
						return fmt.Errorf("row %d's %s %d differs (%.6g in the data set)", i+1, c.name, j+1, c.orig.At(i, j))
					}
				}
			}
		}
	}
	return nil
}

// Units as people read them beside the numbers (see also dataset.UnitName).
const (
	natsUnit  = "nats"         // log densities
	scoreUnit = "fraction 0…1" // the geometry score
)

var (
	unitOr  = dataset.UnitName
	squared = dataset.SquaredUnit
	plural  = dataset.Count // "1 layer", "3 layers"
)

// layerUnit is the unit of layer i's (from 0) outputs of a model with the
// given number of layers: the data's output unit for the last, latent for
// hidden layers.
func layerUnit(i, layers int, info engine.DataInfo) string {
	if i == layers-1 {
		return unitOr(info.YUnit)
	}
	return dataset.LatentUnit
}
