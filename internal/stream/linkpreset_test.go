package stream

import (
	"math"
	"testing"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"

	"gonum.org/v1/gonum/mat"
)

// TestPresetLimitsAdmitTheBuild: viz serve raises the session budget to
// what a preset's build needs at its peak (its restarts side by side), so
// that one client can open it: the Frey-shaped autoencoder (1965 frames of
// 560 pixels) was refused with the default limits, its build estimated
// above the 512 MiB one client may use.
func TestPresetLimitsAdmitTheBuild(t *testing.T) {
	const n, d = 1965, 560
	y := mat.NewDense(n, d, nil)
	for i := range n {
		for j := range d {
			y.Set(i, j, math.Sin(float64(i)/40+float64(j)/9))
		}
	}
	ds := &dataset.Dataset{Name: "frames", X: y, Y: y}
	l := admit.DefaultLimits()
	cat, err := dataset.NewCatalog(nil, l.MaxRows)
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Add(ds, l.MaxRows); err != nil {
		t.Fatal(err)
	}
	raised := admit.PresetLimits(l, cat)
	e := admit.EstimateSession(admit.PresetConfig(admit.DefaultConfig(), ds, raised), ds, n, d, d)
	srv := &Server{limits: raised}
	if need := max(e.Bytes, e.Build); raised.SessionMemory < need || srv.clientShare() < need {
		t.Errorf("session budget %d MiB, one client's share %d MiB; the preset's build needs %d MiB", raised.SessionMemory>>20, srv.clientShare()>>20, need>>20)
	}
}
