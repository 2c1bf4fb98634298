package dataset

import (
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestCatalog: "step" is always there; a data set past the row limit or
// of fewer than 2 rows is refused with the flag that raises the limit; a
// private data set is reachable by its name but listed to no one, and
// gone once removed.
func TestCatalog(t *testing.T) {
	c, err := NewCatalog(nil, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if c.Get("step") == nil || !slices.Equal(c.Names(), []string{"step"}) || c.NameOf(" step ") != "step" || c.NameOf("other") != "other" {
		t.Fatalf("a new catalogue: names %v, want [step]", c.Names())
	}
	rows := func(name string, n int) *Dataset {
		return &Dataset{Name: name, X: mat.NewDense(n, 1, nil), Y: mat.NewDense(n, 1, nil)}
	}
	if err := c.Add(rows("big", 1001), 1000); err == nil || !strings.Contains(err.Error(), "more than the limit of 1000 rows ("+RowsFlag+" raises it)") {
		t.Errorf("1001 rows against a limit of 1000: %v", err)
	}
	if err := c.Add(rows("one", 1), 1000); err == nil || !strings.Contains(err.Error(), "at least 2") {
		t.Errorf("1 row: %v", err)
	}
	if err := c.Add(rows("two", 2), 1000); err != nil {
		t.Fatal(err)
	}
	if info := c.Info(); len(info) != 2 || info[1] != (Entry{Name: "two", Rows: 2, Inputs: 1, Outputs: 1}) {
		t.Errorf("entries %+v", info)
	}
	c.AddPrivate(rows("data-secret", 3))
	if c.Get("data-secret") == nil || slices.Contains(c.Names(), "data-secret") {
		t.Errorf("a private set: reachable %v, listed in %v", c.Get("data-secret") != nil, c.Names())
	}
	c.RemovePrivate("data-secret")
	if c.Get("data-secret") != nil {
		t.Error("a removed private set is still reachable")
	}
}
