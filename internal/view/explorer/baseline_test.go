package explorer

import (
	"slices"
	"testing"
)

// TestGP1Sample: every row up to GP1Rows; beyond, GP1Rows distinct rows
// in order, the same every time, spread over all the rows.
func TestGP1Sample(t *testing.T) {
	if got := GP1Sample(5); !slices.Equal(got, []int{0, 1, 2, 3, 4}) {
		t.Errorf("5 rows: %v", got)
	}
	const n = 3 * GP1Rows
	rows := GP1Sample(n)
	if len(rows) != GP1Rows || !slices.IsSorted(rows) || !slices.Equal(rows, GP1Sample(n)) {
		t.Fatalf("%d rows, sorted %v, or not the same twice", len(rows), slices.IsSorted(rows))
	}
	if len(slices.Compact(slices.Clone(rows))) != GP1Rows || rows[0] < 0 || rows[len(rows)-1] >= n {
		t.Error("rows repeated or out of range")
	}
	// About a third of the rows in each third of the data.
	for third := range 3 {
		c := 0
		for _, r := range rows {
			if r/GP1Rows == third {
				c++
			}
		}
		if c < GP1Rows/3-300 || c > GP1Rows/3+300 {
			t.Errorf("%d sampled rows in third %d, want about %d", c, third+1, GP1Rows/3)
		}
	}
}
