package view

import (
	"strings"
	"testing"

	"dgpviz/internal/engine"
)

// TestRestartsPick: a restart is picked by its number from 1, and each
// way a pick can fail says which.
func TestRestartsPick(t *testing.T) {
	m := &engine.Model{}
	rs := &Restarts{List: []Restart{{Model: m, Bound: -3}, {Failure: "Kuu not positive definite"}}}
	k := func(i int) *int { return &i }
	if e, err := rs.Pick(k(1)); err != nil || e.Model != m || e.Bound != -3 {
		t.Errorf("Pick(1) = %+v, %v", e, err)
	}
	var none *Restarts
	for _, tc := range []struct {
		rs   *Restarts
		k    *int
		want string
	}{
		{none, k(1), "not chosen among restarts"},
		{rs, nil, `missing "restart" (1…2)`},
		{rs, k(0), "there is no restart 0 (the preset ran restarts 1…2)"},
		{rs, k(3), "there is no restart 3"},
		{rs, k(2), "restart 2 has no model: Kuu not positive definite"},
	} {
		if _, err := tc.rs.Pick(tc.k); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Pick: %v, want an error saying %q", err, tc.want)
		}
	}
	if none.Count() != 0 || rs.Count() != 2 {
		t.Errorf("Count: %d and %d, want 0 and 2", none.Count(), rs.Count())
	}
}
