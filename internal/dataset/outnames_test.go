package dataset

import (
	"slices"
	"testing"
)

// TestOutputColumns: outputs carry the data's own names, units cut off
// (the headers add them), layers and dimensions counted from 1, and
// x…/y… when the names are not one per column.
func TestOutputColumns(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"y_ap1 [dBm]", "y_ap1"}, {"x_time", "x_time"}, {" time [s] ", "time"}, {"[dBm]", "[dBm]"}, {"a [b] c", "a [b] c"},
	} {
		if got := ColumnName(tc.name); got != tc.want {
			t.Errorf("ColumnName(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		got, want []string
	}{
		{InputColumns([]string{"x_time [s]"}, 1), []string{"x_time"}},
		{InputColumns(nil, 2), []string{"x1", "x2"}},
		{InputColumns([]string{"a"}, 2), []string{"x1", "x2"}},
		{LayerColumns(2, 3, 2, []string{"y_ap1 [dBm]", "y_ap2"}), []string{"y_ap1", "y_ap2"}},
		{LayerColumns(2, 3, 2, nil), []string{"y1", "y2"}},
		{LayerColumns(0, 3, 2, []string{"y_ap1", "y_ap2"}), []string{"layer1_dim1", "layer1_dim2"}},
		{LayerColumns(1, 3, 1, nil), []string{"layer2_dim1"}},
		{LayerColumns(0, 1, 1, []string{""}), []string{"y1"}},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%q, want %q", tc.got, tc.want)
		}
	}
}
