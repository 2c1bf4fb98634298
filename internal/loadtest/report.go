package loadtest

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Report is a run's result (the -json output).
type Report struct {
	Mode        string  `json:"mode"`
	N           int     `json:"n"`
	Duration    float64 `json:"duration_s"`
	Query       string  `json:"query"`
	URL         string  `json:"url"`
	InProcess   bool    `json:"in_process"`
	MaxSessions int     `json:"max_sessions,omitempty"` // in-process server's limit

	// sessions and slow modes
	WindowSeconds float64 `json:"window_s,omitempty"` // measurement time, after every client connected
	Clients       int     `json:"clients"`            // sessions served (frames or a clean end)
	Refused       int     `json:"refused"`            // sessions closed by the server without a frame
	DialErrors    int     `json:"dial_errors"`        // handshakes that failed
	DialError     string  `json:"dial_error,omitempty"`
	FPS           Summary `json:"fps"`          // frames per second per client
	FrameKB       float64 `json:"frame_kb"`     // mean size of a frame
	FrameGapMS    Summary `json:"frame_gap_ms"` // time between consecutive frames (frames carry no timestamp)
	ReplyMS       Summary `json:"reply_ms"`     // speed command → its ack
	Unanswered    int     `json:"unanswered"`   // probes without an ack at the end
	ErrorReplies  int     `json:"error_replies"`
	BadFrames     int     `json:"bad_frames"` // first frames stream.Decode rejected

	Before        Sample   `json:"before"`
	During        Sample   `json:"during"` // peak over the per-second samples
	After         Sample   `json:"after"`
	Settled       bool     `json:"settled"` // in process: no sessions and goroutines back at baseline (+2)
	SettleSeconds float64  `json:"settle_s"`
	Samples       []Sample `json:"samples,omitempty"`

	// CloseCodes counts how connections ended, by the code the server
	// closed with ("1000": the load test's own clean close, echoed;
	// "1006": no close frame; "timeout": still open when the load test
	// gave up waiting for the close; "open": never closed).
	CloseCodes   map[string]int    `json:"close_codes"`
	CloseReasons map[string]string `json:"close_reasons,omitempty"` // one reason per code
	Slow         *SlowReport       `json:"slow,omitempty"`
	// PresenterFPS is the presenter's frame rate (followers mode).
	PresenterFPS *float64      `json:"presenter_fps,omitempty"`
	Churn        *ChurnReport  `json:"churn,omitempty"`
	Attack       *AttackReport `json:"attack,omitempty"`
	Relays       *RelaysReport `json:"relays,omitempty"`
}

// SlowReport is the slow mode's: normal clients' frame rates before and
// after the slow clients joined, and what became of the slow ones.
type SlowReport struct {
	Joined    float64 `json:"joined_s"` // since the run started
	FPSBefore Summary `json:"fps_before"`
	FPSAfter  Summary `json:"fps_after"`
	// FPSAfterClosed: the normal clients' rate once the server had closed
	// every slow session (in process, when that left at least 1 s): if it
	// recovers, the slow clients' sessions caused the drop, not the machine.
	FPSAfterClosed Summary      `json:"fps_after_closed"`
	Clients        []SlowClient `json:"clients"`
	// In process, from the server's session counts (sampled each second):
	// how many slow sessions the server had closed by the end, and when
	// it closed the first and the last (seconds after they joined; -1:
	// not within the run). A client that does not read learns how it
	// ended only when it reads, at the end; its close code says how.
	ServerClosed int     `json:"server_closed"`
	FirstClosed  float64 `json:"first_closed_s"`
	AllClosed    float64 `json:"all_closed_s"`
}

// SlowClient is one slow client's outcome.
type SlowClient struct {
	Kind      string `json:"kind"`
	Frames    int    `json:"frames"`
	CloseCode string `json:"close_code"`
	Reason    string `json:"reason,omitempty"`
}

// count records how c's connection ended.
func (r *Report) count(c *client) {
	code := c.closeCode
	if code == "" {
		code = "open"
	}
	r.CloseCodes[code]++
	if code != "1000" && c.closeReason != "" {
		if r.CloseReasons == nil {
			r.CloseReasons = map[string]string{}
		}
		if _, ok := r.CloseReasons[code]; !ok {
			r.CloseReasons[code] = c.closeReason
		}
	}
}

// Unexpected returns the close codes other than the load test's own clean
// close (1000), with their counts.
func (r *Report) Unexpected() map[string]int {
	out := map[string]int{}
	for k, v := range r.CloseCodes {
		if k != "1000" {
			out[k] = v
		}
	}
	return out
}

func sampleText(s Sample) string {
	var parts []string
	if s.RSSMB > 0 {
		parts = append(parts, fmt.Sprintf("RSS %.1f MB", s.RSSMB))
	} else {
		parts = append(parts, "RSS ?")
	}
	if s.Goroutines >= 0 {
		parts = append(parts, fmt.Sprintf("%d goroutines", s.Goroutines))
	}
	if s.Sessions >= 0 {
		parts = append(parts, fmt.Sprintf("%d sessions", s.Sessions))
	}
	return strings.Join(parts, ", ")
}

func codesText(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s×%d", k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// WriteText writes the report for people.
func (r *Report) WriteText(w io.Writer) {
	where := "in-process server"
	if !r.InProcess {
		where = "external server"
	}
	if r.Relays != nil {
		where, r.URL = "a presenter's server, NATS and relays", "loopback"
	}
	fmt.Fprintf(w, "viz loadtest: mode %s, n %d, %s, %s at %s", r.Mode, r.N, durText(r.Duration), where, r.URL)
	if r.MaxSessions > 0 {
		fmt.Fprintf(w, " (max sessions %d)", r.MaxSessions)
	}
	fmt.Fprintf(w, ", query %q\n", r.Query)
	if r.Relays != nil {
		r.Relays.writeText(w, r)
		fmt.Fprintf(w, "close codes:  %s\n", codesText(r.CloseCodes))
		return
	}
	if r.Churn == nil {
		fmt.Fprintf(w, "sessions:     %d served, %d refused, %d failed handshakes", r.Clients, r.Refused, r.DialErrors)
		if r.DialError != "" {
			fmt.Fprintf(w, " (%s)", r.DialError)
		}
		fmt.Fprintf(w, "; measured over %.1f s\n", r.WindowSeconds)
		fmt.Fprintf(w, "frames/s:     min %.1f  p50 %.1f  mean %.1f  (per client; frames of %.1f kB on average)\n", r.FPS.Min, r.FPS.P50, r.FPS.Mean, r.FrameKB)
		if r.PresenterFPS != nil {
			fmt.Fprintf(w, "presenter:    %.1f frames/s (the session the followers watch)\n", *r.PresenterFPS)
		}
		fmt.Fprintf(w, "frame gap:    p50 %.0f ms  p95 %.0f ms  max %.0f ms  (frames carry no timestamp: gaps between arrivals)\n", r.FrameGapMS.P50, r.FrameGapMS.P95, r.FrameGapMS.Max)
		fmt.Fprintf(w, "reply:        p50 %.1f ms  p95 %.1f ms  max %.1f ms  (%d speed commands; %d unanswered, %d error replies)\n", r.ReplyMS.P50, r.ReplyMS.P95, r.ReplyMS.Max, r.ReplyMS.N, r.Unanswered, r.ErrorReplies)
		if r.BadFrames > 0 {
			fmt.Fprintf(w, "bad frames:   %d first frames did not decode\n", r.BadFrames)
		}
	}
	fmt.Fprintf(w, "server before: %s\n", sampleText(r.Before))
	fmt.Fprintf(w, "server during: %s (peak)\n", sampleText(r.During))
	fmt.Fprintf(w, "server after:  %s", sampleText(r.After))
	if r.InProcess {
		if r.Settled {
			fmt.Fprintf(w, " (back to baseline in %.1f s)", r.SettleSeconds)
		} else {
			fmt.Fprintf(w, " (NOT back to baseline after %.1f s)", r.SettleSeconds)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "close codes:  %s\n", codesText(r.CloseCodes))
	for _, k := range sortedKeys(r.CloseReasons) {
		fmt.Fprintf(w, "  %s: %s\n", k, r.CloseReasons[k])
	}
	if s := r.Slow; s != nil {
		fmt.Fprintf(w, "slow clients joined at %.1f s; normal clients' frames/s before: min %.1f p50 %.1f mean %.1f; after: min %.1f p50 %.1f mean %.1f\n",
			s.Joined, s.FPSBefore.Min, s.FPSBefore.P50, s.FPSBefore.Mean, s.FPSAfter.Min, s.FPSAfter.P50, s.FPSAfter.Mean)
		if r.InProcess {
			fmt.Fprintf(w, "the server closed %d of %d slow sessions", s.ServerClosed, len(s.Clients))
			if s.FirstClosed >= 0 {
				fmt.Fprintf(w, ", the first %.0f s after they joined", s.FirstClosed)
			}
			if s.AllClosed >= 0 {
				fmt.Fprintf(w, ", the last after %.0f s", s.AllClosed)
			}
			fmt.Fprintln(w)
			if s.FPSAfterClosed.N > 0 {
				fmt.Fprintf(w, "normal clients' frames/s once every slow session was closed: min %.1f p50 %.1f mean %.1f\n", s.FPSAfterClosed.Min, s.FPSAfterClosed.P50, s.FPSAfterClosed.Mean)
			}
		}
		for _, c := range s.Clients {
			fmt.Fprintf(w, "  %-10s %5d frames, close %s", c.Kind, c.Frames, c.CloseCode)
			if c.Reason != "" && c.CloseCode != "1000" {
				fmt.Fprintf(w, " (%s)", c.Reason)
			}
			fmt.Fprintln(w)
		}
	}
	if c := r.Churn; c != nil {
		c.writeText(w)
	}
	if a := r.Attack; a != nil {
		a.writeText(w)
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func durText(s float64) string { return fmt.Sprintf("%gs", s) }
