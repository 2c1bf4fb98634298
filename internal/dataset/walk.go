package dataset

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
)

// The walk: a synthetic robot-like walk of any length, shaped as the robot
// WiFi data are (one input, the time; 30 signal strengths in dBm), so
// that the robot preset applies, for measuring the program at sizes the
// real data do not reach.
const (
	// WalkBeacons is the number of signal strengths (outputs) per row.
	WalkBeacons = 30
	// WalkNoiseDBm is the standard deviation of the Gaussian noise added
	// to every noise-free signal strength, in dBm.
	WalkNoiseDBm = 2.0
	// WalkTestEvery: every WalkTestEvery-th row (the 10th, 20th, …) is
	// held out, split = test.
	WalkTestEvery = 10
	// WalkDuration is the walk's length in seconds, however many rows
	// sample it, and WalkLaps the laps of the loop it makes: more rows are
	// a denser survey of the same floor, not a longer one, so that a model
	// of the time with a fixed number of inducing points can fit any size
	// (a walk whose laps grew with its rows would need inducing points in
	// proportion).
	WalkDuration = 1800.0
	WalkLaps     = 3
)

// Walk generates the rows of a walk one at a time. A robot goes round a
// 40 m × 16 m corridor loop with rounded corners, WalkLaps times in
// WalkDuration seconds at a speed that varies smoothly (by up to a third
// about its mean of 0.18 m/s), and reads 30 beacons, fixed around and
// inside the loop, at rows evenly spaced in time; a beacon at distance d
// metres reads −30 − 25·log₁₀(max(d, 1)) dBm before noise (log-distance
// path loss; between −30 and −75 dBm on this floor). The seed sets the
// noise alone: the same seed gives the same rows.
type Walk struct {
	rng  *rand.Rand
	i    int // the next row's index
	rows int // rows in all
}

// WalkRow is one row of a walk.
type WalkRow struct {
	Time   float64 // seconds since the first row
	X, Y   float64 // the robot's true position, metres
	Clean  [WalkBeacons]float64
	Signal [WalkBeacons]float64 // Clean plus noise, dBm
	Test   bool                 // held out
}

// NewWalk returns the walk of seed sampled at rows rows, at its first row.
func NewWalk(seed uint64, rows int) *Walk {
	return &Walk{rng: rand.New(rand.NewPCG(seed, 0x5eed_3a1c)), rows: max(rows, 1)}
}

// walkBeacons are the beacons' positions, metres: 20 around the loop's
// outside, 10 along its inner courtyard.
var walkBeacons = func() (b [WalkBeacons][2]float64) {
	for k := range 20 {
		// On an ellipse around the 40 × 16 m loop.
		a := 2 * math.Pi * float64(k) / 20
		b[k] = [2]float64{20 + 24*math.Cos(a), 8 + 12*math.Sin(a)}
	}
	for k := range 10 {
		b[20+k] = [2]float64{6 + 28*float64(k)/9, 8 + 2*float64(k%2*2-1)}
	}
	return b
}()

// Next returns the next row.
func (w *Walk) Next() WalkRow {
	// The time to the millisecond, as files write it; u, the fraction of
	// the walk done, from it.
	t := math.Round(float64(w.i)/float64(w.rows)*WalkDuration*1000) / 1000
	u := t / WalkDuration
	r := WalkRow{Time: t, Test: w.i%WalkTestEvery == WalkTestEvery-1}
	// The arc length: WalkLaps laps, with a speed that swings by about a
	// third, five times over the walk (5 m < the laps' length/(2π·5), so
	// the robot never stops or turns back).
	r.X, r.Y = loopPosition(loopLength*WalkLaps*u + 5*math.Sin(2*math.Pi*5*u))
	for k, b := range walkBeacons {
		d := math.Max(math.Hypot(r.X-b[0], r.Y-b[1]), 1)
		r.Clean[k] = -30 - 25*math.Log10(d)
		r.Signal[k] = r.Clean[k] + WalkNoiseDBm*w.rng.NormFloat64()
	}
	w.i++
	return r
}

// loopLength is the length of loopPosition's loop, metres.
var loopLength = 2*(40.0-2*3) + 2*(16.0-2*3) + 2*math.Pi*3

// loopPosition is the point at arc length s (metres) along a 40 m × 16 m
// loop with corners rounded at a radius of 3 m, counter-clockwise from
// its bottom left.
func loopPosition(s float64) (x, y float64) {
	const w, h, r = 40.0, 16.0, 3.0
	sides := [4]float64{w - 2*r, h - 2*r, w - 2*r, h - 2*r}
	arc := math.Pi * r / 2
	per := 2*(w-2*r) + 2*(h-2*r) + 4*arc
	s = math.Mod(s, per)
	starts := [4][2]float64{{r, 0}, {w, r}, {w - r, h}, {0, h - r}}
	heads := [4][2]float64{{1, 0}, {0, 1}, {-1, 0}, {0, -1}}
	centres := [4][2]float64{{w - r, r}, {w - r, h - r}, {r, h - r}, {r, r}}
	for k := range 4 {
		if s < sides[k] {
			return starts[k][0] + heads[k][0]*s, starts[k][1] + heads[k][1]*s
		}
		s -= sides[k]
		if s < arc {
			a := -math.Pi/2 + float64(k)*math.Pi/2 + s/r
			return centres[k][0] + r*math.Cos(a), centres[k][1] + r*math.Sin(a)
		}
		s -= arc
	}
	return starts[0][0], starts[0][1]
}

// WalkColumns are the columns of a walk file, by the conventions of
// CSVConventions, each with its unit: the input x_time [s], the outputs
// y_ap1 [dBm] … y_ap30 [dBm], the true position truth_x [m], truth_y [m]
// and split.
func WalkColumns() []string {
	cols := []string{Header("x_time", "s")}
	for k := range WalkBeacons {
		cols = append(cols, Header(fmt.Sprintf("y_ap%d", k+1), "dBm"))
	}
	return append(cols, Header("truth_x", "m"), Header("truth_y", "m"), "split")
}

// WriteWalkCSV writes rows rows of the walk of seed as CSV (WalkColumns;
// signal strengths and positions to 3 decimals), one row at a time: its
// memory does not grow with rows.
func WriteWalkCSV(out io.Writer, rows int, seed uint64) error {
	bw := bufio.NewWriterSize(out, 64<<10)
	for j, c := range WalkColumns() {
		if j > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString(c)
	}
	bw.WriteByte('\n')
	w := NewWalk(seed, rows)
	var line []byte
	for range rows {
		r := w.Next()
		line = strconv.AppendFloat(line[:0], r.Time, 'f', -1, 64)
		for _, v := range r.Signal {
			line = append(line, ',')
			line = strconv.AppendFloat(line, v, 'f', 3, 64)
		}
		line = append(line, ',')
		line = strconv.AppendFloat(line, r.X, 'f', 3, 64)
		line = append(line, ',')
		line = strconv.AppendFloat(line, r.Y, 'f', 3, 64)
		if r.Test {
			line = append(line, ",test\n"...)
		} else {
			line = append(line, ",train\n"...)
		}
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}
