package modelfile

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// fuzzData stands for a public data set, so that the fuzzer reads
// references to one without touching the disk.
var fuzzData = func() *dataset.Dataset {
	r, _ := dataset.RemoteNamed("robot")
	x := mat.NewDense(2, 1, []float64{0, 10})
	return &dataset.Dataset{Name: "robot", X: x, Y: mat.DenseCopyOf(x), Source: &r}
}()

// FuzzReadModel: any model file gives a valid model or an error, never a
// panic; it accepts only valid JSON; a model it accepts can be evaluated
// (a bound or a clear error) and reads back the same when written.
func FuzzReadModel(f *testing.F) {
	if b, err := os.ReadFile("../engine/testdata/step3_fitted.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"jitter":1e-6,"data":{"X":[[0],[1]],"Y":[[0],[1]]},"layers":[{"kernel":{"type":"rbf","variance":1,"lengthscales":[1]},"noise_variance":0.1,"inducing_inputs":[[0]],"q_mu":[[0]],"q_sqrt":[[[1]]]}]}`))
	f.Add([]byte(`{"jitter":1e-6,"data":{"X":[[0,1],[1,0]],"Y":[[0],[1]]},"layers":[{"kernel":{"type":"rbfiso","variance":1,"lengthscale":2},"noise_variance":0.1,"inducing_inputs":[[0,0]],"q_mu":[[0]],"q_sqrt":[[[1]]]}]}`))
	// What the data are: units, column names, a reference's path.
	f.Add([]byte(`{"data":{"X":[[0],[1]],"Y":[[0],[1]],"x_unit":"s","x_names":["x_time [s]"],"y_names":["y\u00e9"]},"layers":[{"kernel":{"type":"rbf","variance":1,"lengthscales":[1]},"noise_variance":0.1,"inducing_inputs":[[0]],"q_mu":[[0]],"q_sqrt":[[[1]]]}]}`))
	// Compact arrays: integer data in original units, Y the same as X,
	// q_sqrt's lower triangles (shape 1×2×2: 1, 0.5, 1).
	f.Add([]byte(`{"data":{"X":{"shape":[2,1],"dtype":"uint8","units":"original","base64":"AAo="},"Y":{"same_as":"X"}},` +
		`"normalization":{"x_mean":[5],"x_scale":[5],"y_mean":[5],"y_scale":[5]},` +
		`"layers":[{"kernel":{"type":"linear","variances":[1]},"noise_variance":0.1,"inducing_inputs":{"shape":[2,1],"dtype":"float64","base64":"AAAAAAAA8L8AAAAAAADwPw=="},` +
		`"q_mu":[[0],[1]],"q_sqrt":{"shape":[1,2,2],"dtype":"float64","triangle":"lower","base64":"AAAAAAAA8D8AAAAAAADgPwAAAAAAAPA/"}}]}`))
	// Data that refer to a public data set (fuzzData below: 2 × 1).
	f.Add([]byte(`{"data":{"X":{"shape":[2,1],"units":"original","data_set":{"name":"robot","path":"/nowhere/uw-floor.txt","sha256":"` + fuzzData.Source.SHA256 + `","columns":"inputs"}},"Y":{"same_as":"X"}},` +
		`"layers":[{"kernel":{"type":"rbf","variance":1,"lengthscales":[1]},"noise_variance":0.1,"inducing_inputs":[[0]],"q_mu":[[0]],"q_sqrt":[[[1]]]}]}`))
	f.Add([]byte(`{"layers":[]}`))
	f.Add([]byte(`{"jitter":-1}`))
	f.Add([]byte(`{"a":"\u00e9\ud83d\ude00","b":[true,false,null,-0.5e+3]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return // big inputs only slow the fuzzer; the size limit has its own test
		}
		opt := ReadOptions{LoadDataSet: func(string) (*dataset.Dataset, error) { return fuzzData, nil }}
		mf, err := ReadWith(bytes.NewReader(b), opt)
		if err != nil {
			return
		}
		if !json.Valid(b) {
			t.Fatalf("Read accepted text that is not JSON")
		}
		if err := mf.Model.Validate(); err != nil {
			t.Fatalf("Read accepted a model that does not validate: %v", err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, &File{Model: mf.Model, Data: mf.Data, Info: mf.Info, Extra: withNormalization(mf)}); err != nil {
			t.Fatalf("writing an accepted model: %v", err)
		}
		again, err := ReadWith(&buf, opt)
		if err != nil {
			t.Fatalf("reading an accepted model written again: %v", err)
		}
		sameModel(t, mf.Model, again.Model)
		var ev engine.Evaluator
		ev.Workers = 1
		ev.Evaluate(mf.Model, engine.Options{}) // must not panic; an error is an answer
	})
}
