package dataset

import "testing"

func TestUnitWords(t *testing.T) {
	for _, c := range []struct{ unit, name, squared string }{
		{"dBm", "dBm", "dBm²"},
		{"", "original units", "(original units)²"},
		{"grey level", "grey level", "(grey level)²"},
		{"m/s", "m/s", "(m/s)²"},
		{LatentUnit, "latent", "latent"},
	} {
		if n := UnitName(c.unit); n != c.name || SquaredUnit(n) != c.squared {
			t.Errorf("%q: name %q squared %q, want %q and %q", c.unit, n, SquaredUnit(n), c.name, c.squared)
		}
	}
	if h := Header("time", "s"); h != "time [s]" {
		t.Errorf("header %q", h)
	}
}
