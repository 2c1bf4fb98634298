package admit

import (
	"testing"
	"time"
)

// TestSaturated: the median playing session below 8 frames/s (0.8 of the
// 10 fps minimum) is saturation; one slow client among fast ones, or a
// single session, is not.
func TestSaturated(t *testing.T) {
	for _, tc := range []struct {
		rates []float64
		want  bool
	}{
		{nil, false},
		{[]float64{3}, false},                 // one session: its own client may be slow
		{[]float64{2, 30, 30}, false},         // one slow client among fast ones
		{[]float64{5, 6, 7, 30}, true},        // most sessions starve: median 6.5
		{[]float64{7.9, 8.1}, false},          // median 8.0: not below
		{[]float64{7.5, 7.9, 60, 2, 3}, true}, // median 7.5
	} {
		if got := NewLoad(10).saturated(tc.rates); got != tc.want {
			t.Errorf("saturated(%v) = %v, want %v", tc.rates, got, tc.want)
		}
	}
}

// TestLoadSample: two saturated samples in a row turn admission off, one
// does not; two good ones turn it on again.
func TestLoadSample(t *testing.T) {
	l := NewLoad(10)
	slow, fast := []float64{2, 3}, []float64{30, 30}
	for i, s := range []struct {
		rates, waits  []float64
		over, changed bool
	}{
		{slow, nil, false, false},
		{fast, nil, false, false},
		{slow, nil, false, false},
		{slow, nil, true, true},
		{slow, nil, true, false},
		{fast, []float64{0.9, 0.8}, true, false}, // frames flow, replies wait: still saturated
		{fast, nil, true, false},
		{fast, nil, false, true},
	} {
		if over, changed := l.sample(s.rates, s.waits); over != s.over || changed != s.changed {
			t.Errorf("sample %d: overloaded %v changed %v, want %v %v", i+1, over, changed, s.over, s.changed)
		}
	}
	if Median([]float64{3, 1, 2, 10}) != 2.5 || Median(nil) != 0 {
		t.Errorf("Median: %v %v", Median([]float64{3, 1, 2, 10}), Median(nil))
	}
}

// TestLoadObserve: a session's rate is its frames since its last reading
// over the time between samples, counted only while it plays and once it
// has a reading; the commands' waits count where there were any.
func TestLoadObserve(t *testing.T) {
	l := NewLoad(10)
	t0 := time.Unix(1000, 0)
	a, b, c := new(int), new(int), new(int)
	if s := l.Observe(t0, []Reading{{Session: a, Frames: 10, Playing: true}, {Session: b, Frames: 50, Playing: true}}); s.Playing != 0 {
		t.Errorf("first sample: %d rates, want none (no earlier reading)", s.Playing)
	}
	s := l.Observe(t0.Add(2*time.Second), []Reading{
		{Session: a, Frames: 70, Playing: true},                        // 30 frames/s
		{Session: b, Frames: 130, Playing: true, Wait: time.Second},    // 40 frames/s
		{Session: c, Frames: 99, Playing: true, Wait: 2 * time.Second}, // new: no rate yet
	})
	if s.Playing != 2 || s.MedianFPS != 35 || s.Overloaded || s.Changed {
		t.Errorf("second sample: %+v, want 2 playing at a median 35 frames/s, not yet overloaded", s)
	}
	s = l.Observe(t0.Add(3*time.Second), []Reading{
		{Session: a, Frames: 100, Playing: true, Wait: time.Second}, // 30 frames/s
		{Session: b, Frames: 130},                                   // paused
		{Session: c, Frames: 119, Playing: true, Wait: time.Second}, // 20 frames/s
	})
	if s.Playing != 2 || s.MedianFPS != 25 || !s.Overloaded || !s.Changed {
		t.Errorf("third sample: %+v, want a and c at a median 25 frames/s, overloaded by the commands' waits", s)
	}
}
