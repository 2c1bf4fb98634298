package engine

// fixture is a model read from a model file in testdata.
type fixture struct{ Model *Model }

// readFixture reads a model file. Model files are package modelfile's,
// which imports the engine, so the engine's own tests cannot import it:
// modelfile_test.go, an external test file of the same test binary, sets
// readFixture when the tests start.
var readFixture = func(path string) (*fixture, error) {
	panic("readFixture: modelfile_test.go did not set it")
}

// SetReadModel sets how the engine's tests read a model file.
func SetReadModel(read func(path string) (*Model, error)) {
	readFixture = func(path string) (*fixture, error) {
		m, err := read(path)
		if err != nil {
			return nil, err
		}
		return &fixture{Model: m}, nil
	}
}
