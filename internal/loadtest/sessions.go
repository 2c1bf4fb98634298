package loadtest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"time"
)

// runSessions runs the sessions and slow modes: N normal clients measured
// over the duration; in slow mode, slow clients join after a third of it.
func runSessions(ctx context.Context, o Options, t *target, r *Report) error {
	t0 := time.Now()
	r.Before = t.sample(t0)
	baseGoroutines := r.Before.Goroutines
	u := t.url + "?" + o.Query
	kind := kindNormal
	var presenter *client
	if o.Mode == ModeFollowers {
		ps := connect(ctx, u, kindNormal, 1, t0, r)
		if presenter = ps[0]; presenter == nil || presenter.share == "" {
			return fmt.Errorf("the presenter's session did not start (no share key)")
		}
		presenter.start()
		u, kind = t.url+"?follow="+presenter.share, kindFollower
	}

	// Connect the clients, 16 handshakes at a time.
	o.note("connecting %d %s clients to %s", o.N, kind, u)
	clients := connect(ctx, u, kind, o.N, t0, r)
	live := liveClients(clients)
	o.note("%d of %d sessions open after %.1f s", len(live), o.N, time.Since(t0).Seconds())

	stop := make(chan struct{})
	var probesWG sync.WaitGroup
	startProbes := func(cs []*client) {
		for _, c := range cs {
			if c.kind != kindNormal {
				continue
			}
			probesWG.Add(1)
			off := time.Duration(rand.Int64N(int64(o.ReplyEvery)))
			spawn(func() { defer probesWG.Done(); c.probes(o.ReplyEvery, off, stop) })
		}
	}
	startReaders := func(cs []*client) {
		for _, c := range cs {
			if c.kind != kindNeverRead && !c.started.Load() {
				c.start()
			}
		}
	}
	startReaders(live)
	startProbes(live)

	// Sample the server every second during the measurement.
	smp := startSampler(t, t0, stop)

	winStart := time.Since(t0)
	var slow []*client
	var phase time.Duration // slow mode: when the slow clients joined
	slowLive := 0           // slow clients the server accepted
	sleep := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	if o.Mode == ModeSlow {
		ok := sleep(o.Duration / 3)
		if ok {
			ns := max(1, o.N/4)
			o.note("slow clients joining: %d (half never read, half read a message a second)", ns)
			phase = time.Since(t0)
			for i := range ns {
				kind := kindNeverRead
				if i%2 == 1 {
					kind = kindSlowRead
				}
				slow = append(slow, connect(ctx, u, kind, 1, t0, r)...)
			}
			slowLive = len(liveClients(slow))
			startReaders(liveClients(slow))
			sleep(o.Duration - o.Duration/3)
		}
	} else {
		sleep(o.Duration)
	}
	winEnd := time.Since(t0)
	close(stop)
	samples := append(smp.wait(), t.sample(t0)) // at least one, however short the window
	probesWG.Wait()

	// Close every client cleanly and wait for the server to settle.
	var wg sync.WaitGroup
	all := append(liveClients(clients), liveClients(slow)...)
	for _, c := range all {
		wg.Add(1)
		spawn(func() { defer wg.Done(); c.finish() })
	}
	for _, c := range append(clients, slow...) {
		if c != nil && !contains(all, c) {
			<-c.done
		}
	}
	wg.Wait()
	if presenter != nil { // after its followers: its end closes theirs (1001)
		presenter.finish()
	}
	// Frames and probes counted; the readers have ended.
	r.After, r.SettleSeconds, r.Settled = t.settle(t0, baseGoroutines, 2, 15*time.Second)
	r.SettleSeconds = round3(r.SettleSeconds)
	r.During = peak(samples)
	r.Samples = samples

	// Per-client results.
	r.WindowSeconds = round3((winEnd - winStart).Seconds())
	var fps, fpsBefore, fpsAfter, gaps, lat []float64
	unanswered := 0
	var bytes int64
	nframes := 0
	for _, c := range clients {
		if c == nil {
			continue
		}
		r.count(c)
		if len(c.frames) == 0 && c.closeCode != "1000" { // refused (1013, 1008…) or never served
			r.Refused++
			continue
		}
		r.Clients++
		fps = append(fps, rate(c.frames, winStart, winEnd))
		if o.Mode == ModeSlow && phase > 0 {
			fpsBefore = append(fpsBefore, rate(c.frames, winStart, phase))
			fpsAfter = append(fpsAfter, rate(c.frames, phase, winEnd))
		}
		gaps = append(gaps, frameGaps(c.frames, winStart, winEnd)...)
		for _, p := range c.latencies {
			if p.sent >= winStart && p.sent < winEnd {
				lat = append(lat, p.rtt.Seconds()*1000)
			}
		}
		unanswered += c.unanswered()
		bytes += c.bytes
		nframes += len(c.frames)
		r.BadFrames += c.badFrames
		r.ErrorReplies += c.errReplies
	}
	r.FPS = summarize(fps)
	if presenter != nil {
		pf := rate(presenter.frames, winStart, winEnd)
		r.PresenterFPS = &pf
	}
	r.FrameGapMS = summarize(gaps)
	r.ReplyMS = summarize(lat)
	r.Unanswered = unanswered
	if nframes > 0 {
		r.FrameKB = round3(float64(bytes) / float64(nframes) / 1024)
	}
	if o.Mode == ModeSlow {
		r.Slow = &SlowReport{Joined: round3(phase.Seconds()), FPSBefore: summarize(fpsBefore), FPSAfter: summarize(fpsAfter), FirstClosed: -1, AllClosed: -1}
		slowClosedTimes(r.Slow, samples, len(live), slowLive)
		if r.Slow.AllClosed >= 0 { // the normal clients once the server had closed every slow one
			from := phase + time.Duration(r.Slow.AllClosed*float64(time.Second))
			var after []float64
			for _, c := range clients {
				if c != nil && (len(c.frames) > 0 || c.closeCode == "1000") {
					after = append(after, rate(c.frames, from, winEnd))
				}
			}
			if winEnd-from >= time.Second {
				r.Slow.FPSAfterClosed = summarize(after)
			}
		}
		for _, c := range slow {
			if c == nil {
				continue
			}
			r.count(c)
			sc := SlowClient{Kind: c.kind, Frames: len(c.frames), CloseCode: c.closeCode, Reason: c.closeReason}
			r.Slow.Clients = append(r.Slow.Clients, sc)
		}
	}
	return nil
}

// connect dials n clients of a kind, 16 at a time; a failed dial is
// counted in r and leaves a nil entry.
func connect(ctx context.Context, u, kind string, n int, t0 time.Time, r *Report) []*client {
	out := make([]*client, n)
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		spawn(func() {
			defer func() { <-sem; wg.Done() }()
			c, err := dial(u, kind, t0)
			if err != nil {
				mu.Lock()
				r.DialErrors++
				if r.DialError == "" {
					r.DialError = err.Error()
				}
				mu.Unlock()
				return
			}
			out[i] = c
		})
	}
	wg.Wait()
	return out
}

// liveClients are the clients whose session was not refused at once.
func liveClients(cs []*client) []*client {
	var out []*client
	for _, c := range cs {
		if c != nil && !c.refused() {
			out = append(out, c)
		}
	}
	return out
}

func contains(cs []*client, c *client) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

// rate is the frames per second that arrived in [from, to).
func rate(frames []time.Duration, from, to time.Duration) float64 {
	if to <= from {
		return 0
	}
	n := 0
	for _, f := range frames {
		if f >= from && f < to {
			n++
		}
	}
	return float64(n) / (to - from).Seconds()
}

// frameGaps are the gaps (ms) between consecutive frames within [from, to).
func frameGaps(frames []time.Duration, from, to time.Duration) []float64 {
	var out []float64
	for i := 1; i < len(frames); i++ {
		if frames[i-1] >= from && frames[i] < to {
			out = append(out, (frames[i]-frames[i-1]).Seconds()*1000)
		}
	}
	return out
}

// peak is the largest RSS and goroutines among samples.
func peak(samples []Sample) Sample {
	if len(samples) == 0 {
		return Sample{Goroutines: -1, Sessions: -1}
	}
	p := samples[0]
	for _, s := range samples[1:] {
		if s.RSSMB > p.RSSMB {
			p.RSSMB, p.At = s.RSSMB, s.At
		}
		p.Goroutines = max(p.Goroutines, s.Goroutines)
		p.Sessions = max(p.Sessions, s.Sessions)
	}
	return p
}

// Summary summarises values: count, min, percentiles, mean and max.
type Summary struct {
	N    int     `json:"n"`
	Min  float64 `json:"min"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
}

func summarize(v []float64) Summary {
	if len(v) == 0 {
		return Summary{}
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	q := func(p float64) float64 { return s[min(len(s)-1, int(p*float64(len(s))))] }
	return Summary{N: len(s), Min: round3(s[0]), P50: round3(q(0.5)), P95: round3(q(0.95)), Mean: round3(sum / float64(len(s))), Max: round3(s[len(s)-1])}
}

// round3 rounds to 3 decimals, for a readable JSON report.
func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// slowClosedTimes finds, from an in-process server's session counts, when
// the server closed the first and the last of the slow sessions (seconds
// after they joined; -1: not within the run).
func slowClosedTimes(s *SlowReport, samples []Sample, normal, slow int) {
	for _, x := range samples {
		if x.Sessions < 0 || x.At < s.Joined {
			continue
		}
		closed := normal + slow - x.Sessions
		if closed > 0 && s.FirstClosed < 0 {
			s.FirstClosed = round3(x.At - s.Joined)
		}
		if closed >= slow && s.AllClosed < 0 {
			s.AllClosed = round3(x.At - s.Joined)
		}
		s.ServerClosed = max(0, closed)
	}
}
