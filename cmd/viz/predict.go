package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/modelfile"

	"gonum.org/v1/gonum/mat"
)

func init() {
	register(command{name: "predict", summary: "print every layer's predictive message at given inputs (original units)", run: runPredict})
}

// maxPredictInputs bounds the number of prediction inputs read from -x or -in.
const maxPredictInputs = 1000000

// predictJSON is viz predict's output: the inputs and every layer's
// message at them, each beside its units.
type predictJSON struct {
	Units xUnitsJSON `json:"units"`
	// XColumns name X's columns, as the data do (dataset.InputColumns).
	XColumns []string      `json:"x_columns"`
	X        [][]float64   `json:"x"`
	Layers   []messageJSON `json:"layers"`
}

type xUnitsJSON struct {
	X string `json:"x"`
}

func runPredict(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("predict", stderr)
	path := fs.String("model", "", "model file (JSON) written by viz fit")
	xs := fs.String("x", "", "comma-separated inputs of a model with one input dimension")
	in := fs.String("in", "", "CSV file of inputs, one row per input (a header line is skipped)")
	format := fs.String("format", "json", "output format: json or csv")
	workers := fs.Int("workers", 0, "goroutines (0: one per CPU)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *path == "" {
		return badInput("viz predict: -model FILE is required")
	}
	if *format != "json" && *format != "csv" {
		return badInput("viz predict: -format %q: want json or csv", *format)
	}
	if *xs != "" && *in != "" {
		return badInput("viz predict: give -x or -in, not both")
	}
	mf, err := readModelFile("viz predict", *path)
	if err != nil {
		return err
	}
	m, nx, ny := mf.Model, mf.NormX, mf.NormY
	info := dataInfo(mf)
	_, q := m.X.Dims()

	// Inputs in original units.
	var x *mat.Dense
	switch {
	case *xs != "":
		if q != 1 {
			return badInput("viz predict: -x: the model has %d input dimensions; use -in FILE.csv", q)
		}
		v, err := parseFloats(*xs)
		if err != nil {
			return badInput("viz predict: -x: %v", err)
		}
		x = mat.NewDense(len(v), 1, v)
	case *in != "":
		x, err = readInputCSV(*in, q)
		if err != nil {
			return badInput("viz predict: -in: %v", err)
		}
	default:
		x = nx.UndoMean(m.X)
	}

	ev := engine.Evaluator{Workers: *workers}
	msgs, err := ev.Predict(m, nx.Apply(x))
	if err != nil {
		return usageError{fmt.Errorf("viz predict: %w", err)}
	}
	last := len(msgs) - 1
	msgs[last].Mean = ny.UndoMean(msgs[last].Mean)
	msgs[last].Var = ny.UndoVar(msgs[last].Var)

	if *format == "csv" {
		return writePredictCSV(stdout, x, msgs, info)
	}
	out := predictJSON{Units: xUnitsJSON{unitOr(info.XUnit)}, XColumns: dataset.InputColumns(info.XNames, q), X: modelfile.MatrixRows(x)}
	for i, msg := range msgs {
		out.Layers = append(out.Layers, newMessageJSON(i, len(msgs), msg, info))
	}
	return json.NewEncoder(stdout).Encode(out)
}

func ones(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 1
	}
	return v
}

// parseFloats parses a comma-separated list of finite numbers.
func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q is not a finite number", f)
		}
		if len(out) == maxPredictInputs {
			return nil, fmt.Errorf("more than %d inputs", maxPredictInputs)
		}
		out = append(out, v)
	}
	return out, nil
}

// readInputCSV reads rows of q numbers; a first line that is not numeric
// is a header and is skipped.
func readInputCSV(path string, q int) (*mat.Dense, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, errors.Unwrap(err))
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReader(io.LimitReader(f, dataset.MaxFileSize)))
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	var data []float64
	line := 0
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		line++
		if len(rec) != q {
			return nil, fmt.Errorf("line %d: %d fields, the model has %d input dimensions", line, len(rec), q)
		}
		row := make([]float64, q)
		bad := ""
		for j, s := range rec {
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				bad = s
				break
			}
			row[j] = v
		}
		if bad != "" {
			if line == 1 {
				continue // header
			}
			return nil, fmt.Errorf("line %d: %q is not a finite number", line, bad)
		}
		if len(data)/q == maxPredictInputs {
			return nil, fmt.Errorf("more than %d inputs", maxPredictInputs)
		}
		data = append(data, row...)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("%s: no inputs", path)
	}
	return mat.NewDense(len(data)/q, q, data), nil
}

// writePredictCSV writes one row per input: the input columns, then for
// every layer and each of its columns the mean and the variance, named as
// the data name them (dataset.InputColumns, dataset.LayerColumns: "x_time",
// "y_ap1_mean", "y_ap1_var", a hidden layer's "layer1_dim2_mean", layers
// and dimensions counted from 1), each header with its unit in brackets:
// "x_time [s]", "layer1_dim1_mean [latent]", "y_ap1_var [dBm²]".
func writePredictCSV(w io.Writer, x *mat.Dense, msgs []engine.Message, info modelfile.DataInfo) error {
	n, q := x.Dims()
	cw := csv.NewWriter(w)
	var head []string
	for _, name := range dataset.InputColumns(info.XNames, q) {
		head = append(head, dataset.Header(name, unitOr(info.XUnit)))
	}
	for i, msg := range msgs {
		_, d := msg.Mean.Dims()
		u := layerUnit(i, len(msgs), info)
		for _, name := range dataset.LayerColumns(i, len(msgs), d, info.YNames) {
			head = append(head, dataset.Header(name+"_mean", u), dataset.Header(name+"_var", squared(u)))
		}
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	row := make([]string, 0, len(head))
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for r := range n {
		row = row[:0]
		for j := range q {
			row = append(row, num(x.At(r, j)))
		}
		for _, msg := range msgs {
			_, d := msg.Mean.Dims()
			for k := range d {
				row = append(row, num(msg.Mean.At(r, k)), num(msg.Var.At(r, k)))
			}
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
