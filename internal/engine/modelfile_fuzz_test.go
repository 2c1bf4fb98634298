package engine

import (
	"bytes"
	"os"
	"testing"
)

// FuzzReadModel: any model file gives a valid model or an error, never a
// panic; a model it accepts can be evaluated (a bound or a clear error).
func FuzzReadModel(f *testing.F) {
	if b, err := os.ReadFile("testdata/step3_fitted.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"jitter":1e-6,"data":{"x":[[0],[1]],"y":[[0],[1]]},"layers":[{"kernel":{"type":"rbf","variance":1,"lengthscales":[1]},"noise_variance":0.1,"inducing_inputs":[[0]],"q_mu":[[0]],"q_sqrt":[[[1]]]}]}`))
	f.Add([]byte(`{"jitter":1e-6,"data":{"x":[[0,1],[1,0]],"y":[[0],[1]]},"layers":[{"kernel":{"type":"rbfiso","variance":1,"lengthscale":2},"noise_variance":0.1,"inducing_inputs":[[0,0]],"q_mu":[[0]],"q_sqrt":[[[1]]]}]}`))
	f.Add([]byte(`{"layers":[]}`))
	f.Add([]byte(`{"jitter":-1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return // big inputs only slow the fuzzer; the size limit has its own test
		}
		mf, err := ReadModel(bytes.NewReader(b))
		if err != nil {
			return
		}
		if err := mf.Model.Validate(); err != nil {
			t.Fatalf("ReadModel accepted a model that does not validate: %v", err)
		}
		var ev Evaluator
		ev.Workers = 1
		ev.Evaluate(mf.Model, Options{}) // must not panic; an error is an answer
	})
}
