package dataset

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// Parameters of the simulated robot run written by writeRobotFixture. They
// are chosen to resemble uw-floor.txt (see /work/shared/data/robot_wireless/
// README.md): scans about 1.5 s apart, 30 access points, 11–15 readings per
// scan, strengths between -90 dBm (the receiver's floor) and -34 dBm.
const (
	fixtureAPs       = 30               // access points, as in uw-floor.txt
	fixtureStartUS   = 1135214648218000 // first time stamp of uw-floor.txt, in µs
	fixtureSpeed     = 1.0              // robot speed, m/s (walking pace indoors)
	fixtureTxDBm     = -32.0            // strength at 1 m, dBm (typical 802.11 AP)
	fixtureExponent  = 3.5              // indoor log-distance path-loss exponent (2 free space, 3–4 indoors)
	fixtureNoiseDB   = 4.0              // shadowing noise sd, dB (typical indoor value)
	fixtureFloorDBm  = -90              // readings below are dropped (receiver floor)
	fixtureCeilDBm   = -34              // strongest reading in uw-floor.txt
	fixtureMinPerScn = 11               // readings kept per scan: uniform in
	fixtureMaxPerScn = 15               // [11, 15] strongest, as in uw-floor.txt
)

// fixturePath is the robot's route in metres: a tail from (20, 25) down to
// the loop, then a 30 m × 12 m rectangular loop around a building, entered
// at (20, 17) and driven anticlockwise on the map, repeated as needed.
var fixturePath = [][2]float64{{20, 25}, {20, 17}, {5, 17}, {5, 5}, {35, 5}, {35, 17}, {20, 17}}

// robotTruth records what writeRobotFixture simulated, as written.
type robotTruth struct {
	Times     []float64        // seconds since the first scan
	Positions [][2]float64     // true x, y per scan, rounded as written
	Readings  []map[string]int // per scan: access point → dBm
	APs       []string         // the access points that appear, sorted
	Lines     int              // lines written
}

// splitMix64 is a tiny deterministic generator (Steele, Lea & Flood 2014),
// used instead of math/rand so the fixture never depends on the Go version.
type splitMix64 uint64

func (s *splitMix64) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// uniform returns a number in [0, 1).
func (s *splitMix64) uniform() float64 { return float64(s.next()>>11) / (1 << 53) }

// normal returns a standard normal number (Box–Muller).
func (s *splitMix64) normal() float64 {
	u := 1 - s.uniform() // (0, 1]
	return math.Sqrt(-2*math.Log(u)) * math.Cos(2*math.Pi*s.uniform())
}

// pathPoint returns the position after driving dist metres along
// fixturePath, going round the loop (all but the first segment) again
// once its end is reached.
func pathPoint(dist float64) (x, y float64) {
	seg := func(i int) float64 {
		a, b := fixturePath[i], fixturePath[i+1]
		return math.Hypot(b[0]-a[0], b[1]-a[1])
	}
	tail := seg(0)
	if dist > tail {
		var loop float64
		for i := 1; i < len(fixturePath)-1; i++ {
			loop += seg(i)
		}
		dist = tail + math.Mod(dist-tail, loop)
	}
	for i := 0; i < len(fixturePath)-1; i++ {
		l := seg(i)
		if dist <= l {
			a, b := fixturePath[i], fixturePath[i+1]
			f := dist / l
			return a[0] + f*(b[0]-a[0]), a[1] + f*(b[1]-a[1])
		}
		dist -= l
	}
	p := fixturePath[len(fixturePath)-1]
	return p[0], p[1]
}

// writeRobotFixture simulates a robot driving fixturePath while scanning
// fixtureAPs access points at random positions, and writes scans readings
// to w in the uw-floor.txt format: "time mac x y dBm", one reading per line,
// scans in time order, access points sorted within a scan. Strengths follow
// the log-distance path-loss model with Gaussian shadowing; readings below
// fixtureFloorDBm are dropped and at most 11–15 of the strongest are kept.
// The output depends only on scans and seed.
func writeRobotFixture(w io.Writer, scans int, seed uint64) (robotTruth, error) {
	rng := splitMix64(seed)
	type ap struct {
		mac  string
		x, y float64
	}
	aps := make([]ap, 0, fixtureAPs)
	used := make(map[string]bool)
	for len(aps) < fixtureAPs {
		// Access points anywhere in and around the building.
		mac := fmt.Sprintf("00:0f:04:%02x:%02x:%02x", rng.next()&0xff, rng.next()&0xff, rng.next()&0xf0)
		if used[mac] {
			continue
		}
		used[mac] = true
		aps = append(aps, ap{mac: mac, x: -5 + 50*rng.uniform(), y: 0 + 30*rng.uniform()})
	}
	slices.SortFunc(aps, func(a, b ap) int {
		if a.mac < b.mac {
			return -1
		}
		return 1
	})

	var truth robotTruth
	bw := bufio.NewWriter(w)
	seen := make(map[string]bool)
	var us int64 = fixtureStartUS
	var dist float64
	type reading struct {
		mac string
		dBm int
	}
	for s := range scans {
		if s > 0 {
			dt := 1.4 + 0.2*rng.uniform() // scans 1.4–1.6 s apart
			us += int64(math.Round(dt * 1e6))
			dist += fixtureSpeed * dt
		}
		x, y := pathPoint(dist)
		xs, ys := strconv.FormatFloat(x, 'f', 2, 64), strconv.FormatFloat(y, 'f', 2, 64)
		xr, _ := strconv.ParseFloat(xs, 64)
		yr, _ := strconv.ParseFloat(ys, 64)

		var rs []reading
		for _, a := range aps {
			d := math.Max(1, math.Hypot(a.x-x, a.y-y))
			p := math.Round(fixtureTxDBm - 10*fixtureExponent*math.Log10(d) + fixtureNoiseDB*rng.normal())
			if p < fixtureFloorDBm {
				continue
			}
			rs = append(rs, reading{a.mac, int(math.Min(p, fixtureCeilDBm))})
		}
		keep := fixtureMinPerScn + int(rng.next()%uint64(fixtureMaxPerScn-fixtureMinPerScn+1))
		if len(rs) > keep {
			slices.SortStableFunc(rs, func(a, b reading) int { return b.dBm - a.dBm })
			rs = rs[:keep]
		}
		slices.SortFunc(rs, func(a, b reading) int {
			if a.mac < b.mac {
				return -1
			}
			return 1
		})

		m := make(map[string]int, len(rs))
		for _, r := range rs {
			fmt.Fprintf(bw, "%d.%06d %s %s %s %d\n", us/1e6, us%1e6, r.mac, xs, ys, r.dBm)
			m[r.mac] = r.dBm
			seen[r.mac] = true
			truth.Lines++
		}
		truth.Times = append(truth.Times, float64(us-fixtureStartUS)/1e6)
		truth.Positions = append(truth.Positions, [2]float64{xr, yr})
		truth.Readings = append(truth.Readings, m)
	}
	for mac := range seen {
		truth.APs = append(truth.APs, mac)
	}
	slices.Sort(truth.APs)
	return truth, bw.Flush()
}
