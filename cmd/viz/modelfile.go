package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"dgpviz/internal/dataset"
	"dgpviz/internal/modelfile"

	"gonum.org/v1/gonum/mat"
)

// What the commands that read a model file share: reading it with errors
// that name the file, the data set it records, and the units its numbers
// are printed in.

// readModelFile reads a model file for command cmd ("viz predict"); a
// file that cannot be read or is not a model file is bad input.
func readModelFile(cmd, path string) (*modelfile.File, error) {
	mf, err := modelfile.ReadFile(path)
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
func recordedData(mf *modelfile.File) string { return recorded(mf).Spec }

// recorded returns a model file's dataset section (datasetJSON), its Spec
// "" when the file records no data set that can be loaded again.
func recorded(mf *modelfile.File) datasetJSON {
	var d datasetJSON
	if json.Unmarshal(mf.Extra["dataset"], &d) != nil {
		return datasetJSON{}
	}
	if d.Spec == "" {
		if _, ok := dataset.RemoteNamed(d.Name); ok || d.Name == "step" {
			d.Spec = d.Name
		}
	}
	return d
}

// dataInfo returns what mf says of its data (units, image shape, column
// names); a file that says nothing (older files) takes it from the data set
// it records when that can be loaded, and a file without column names
// those its dataset section records.
func dataInfo(mf *modelfile.File) modelfile.DataInfo {
	info := mf.Info
	if info.IsZero() {
		if spec := recordedData(mf); spec != "" {
			if ds, err := dataset.Load(spec); err == nil && sameColumns(mf, ds) {
				info = modelfile.InfoOf(ds)
			}
		}
	}
	if info.XNames == nil || info.YNames == nil {
		rec := recorded(mf)
		if info.XNames == nil {
			info.XNames = rec.InputNames
		}
		if info.YNames == nil {
			info.YNames = rec.OutputNames
		}
	}
	return info
}

// sameColumns reports whether ds has the columns of mf's data.
func sameColumns(mf *modelfile.File, ds *dataset.Dataset) bool {
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
func modelDataset(cmd, path string, mf *modelfile.File, spec string) (*dataset.Dataset, string, error) {
	ds := mf.Data // the data set the file refers to, loaded as it was read
	if spec != "" || ds == nil {
		if spec == "" {
			rec := recorded(mf)
			if spec = rec.Spec; spec == "" {
				return nil, "", badInput("%s: %s does not say which data set it was fitted to: give it with -data (robot, frey, csv:PATH, …)", cmd, path)
			}
			var err error
			if spec, err = recordedFile(path, spec, rec.SHA256); err != nil {
				return nil, spec, badInput("%s: %v", cmd, err)
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

// recordedFile checks the file that spec, a model file's recorded data
// set, names: it must have the sha256 recorded beside it (when one is:
// older files have none). A relative path (older files recorded the path
// as given to viz fit) is looked for from the working folder, then from
// the model file's. It returns the spec to load.
func recordedFile(model, spec, sum string) (string, error) {
	scheme, file := dataset.SpecFile(spec)
	if file == "" {
		return spec, nil
	}
	if !filepath.IsAbs(file) {
		if _, err := os.Stat(file); err != nil {
			if beside := filepath.Join(filepath.Dir(model), file); fileExists(beside) {
				file = beside
				spec = beside
				if scheme != "" {
					spec = scheme + ":" + beside
				}
			}
		}
	}
	if sum == "" {
		return spec, nil
	}
	got, err := dataset.FileSHA256(file)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe):
		return spec, fmt.Errorf("%s was fitted to the data in %s, which cannot be read here (%v): give them with -data", model, file, pe.Err)
	case err != nil:
		return spec, fmt.Errorf("%s was fitted to the data in %s: %v", model, file, err)
	case got != sum:
		return spec, fmt.Errorf("%s was fitted to the data in %s, and that file has changed since (its sha256 is %s, the model's %s): give the data it was fitted to with -data", model, file, got, sum)
	}
	return spec, nil
}

// fileExists reports whether path is a file that can be opened.
func fileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir()
}

// sameDataRows is how many rows sameData normalises at a time.
const sameDataRows = 16384

// sameData checks that ds's training rows, normalised as the model file's
// data were, are the model's data.
func sameData(mf *modelfile.File, ds *dataset.Dataset) error {
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
func layerUnit(i, layers int, info modelfile.DataInfo) string {
	if i == layers-1 {
		return unitOr(info.YUnit)
	}
	return dataset.LatentUnit
}
