package engine_test

import (
	"dgpviz/internal/engine"
	"dgpviz/internal/modelfile"
)

func init() {
	engine.SetReadModel(func(path string) (*engine.Model, error) {
		mf, err := modelfile.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return mf.Model, nil
	})
}
