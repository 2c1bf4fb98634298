package stream

import (
	"math"
	"sync"
	"time"

	"dgpviz/internal/engine"
	"dgpviz/internal/latent"
)

// robotAnalysisEvery is the least time between two background analyses
// while the optimizer runs: about 5 per second, each ~5–10 ms on one core.
const robotAnalysisEvery = 200 * time.Millisecond

// robotAnalysis is the expensive part of a robot frame, computed for one
// snapshot: the bound with its terms and per-datum penalties, the output
// layer's messages at the training and test scans, and the geometry scores.
type robotAnalysis struct {
	iter    int
	applied int64
	seq     uint64 // increases with every analysis (frames send test data once per analysis)
	res     *engine.Result
	err     error
	test    *engine.Message  // output layer's message at the test scans
	testH   []engine.Message // the hidden layers' messages there: predictions from time alone
	rmse    float64          // test RMSE, dBm
	scores  []latent.Score   // one per hidden layer
}

// robotFramer holds a session writer's robot state.
type robotFramer struct {
	mu       sync.Mutex
	latest   *robotAnalysis // newest finished analysis
	busy     bool           // a background analysis is running
	started  time.Time      // start of the last analysis
	nextSeq  uint64
	sentSeq  uint64         // analysis seq whose output/test arrays the last frame carried
	dims     []int          // layer shapes of the latest analysis, to detect architecture changes
	analyzed sync.WaitGroup // background analyses in flight (tests wait on it)
}

func layerDims(m *engine.Model) []int {
	var out []int
	for _, l := range m.Layers {
		a, b, c := l.Dims()
		out = append(out, a, b, c)
	}
	return out
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// analyze computes the robot analysis of m (read only).
func analyze(m *engine.Model, r *robotInfo, iter int, applied int64) *robotAnalysis {
	ev := engine.Evaluator{Workers: 1}
	a := &robotAnalysis{iter: iter, applied: applied, rmse: math.NaN()}
	a.res, _, a.err = ev.Evaluate(m, engine.Options{OutputVariance: true})
	if a.err != nil {
		a.res = nil
		return a
	}
	for i := 0; i+1 < len(m.Layers); i++ {
		s, err := latent.LoopClosure(a.res.Messages[i].Mean, r.pos, latent.DefaultMinLag, latent.DefaultRadius)
		if err != nil {
			s.Value = math.NaN()
		}
		a.scores = append(a.scores, s)
	}
	if r.xTest != nil {
		if msgs, err := ev.Predict(m, r.xTest); err == nil {
			a.test, a.testH = &msgs[len(msgs)-1], msgs[:len(msgs)-1]
			a.rmse = r.rmseDBm(a.test.Mean)
		}
	}
	return a
}

// current returns the analysis to send with a frame of s: computed now
// when the frame shows a command's effect, when paused, or after an
// architecture change; otherwise the newest background analysis, starting
// a new one when it is older than robotAnalysisEvery.
// analyze computes the analysis of a model (robot's analyze, or the Frey
// view's freyAnalyze) on the frame writer's goroutine or in the background.
func (rf *robotFramer) current(s *snapshot, analyze func(m *engine.Model, iter int, applied int64) *robotAnalysis) *robotAnalysis {
	rf.mu.Lock()
	defer rf.mu.Unlock()
	dims := layerDims(s.model)
	a := rf.latest
	sync := a == nil || !s.running || s.applied != a.applied || s.iter < a.iter || !equalInts(dims, rf.dims)
	if sync {
		rf.started = time.Now()
		na := analyze(s.model, s.iter, s.applied)
		rf.nextSeq++
		na.seq = rf.nextSeq
		rf.latest, rf.dims = na, dims
		return na
	}
	if !rf.busy && time.Since(rf.started) >= robotAnalysisEvery && s.iter > a.iter {
		rf.busy, rf.started = true, time.Now()
		rf.analyzed.Add(1)
		m, iter, applied := s.model, s.iter, s.applied
		go func() {
			defer rf.analyzed.Done()
			na := analyze(m, iter, applied)
			rf.mu.Lock()
			defer rf.mu.Unlock()
			rf.busy = false
			// A synchronous analysis of a newer state may have finished first.
			if rf.latest == nil || rf.latest.iter <= iter && rf.latest.applied == applied && equalInts(dims, rf.dims) {
				rf.nextSeq++
				na.seq = rf.nextSeq
				rf.latest = na
			}
		}()
	}
	return a
}

// robotFrameHeader is the frame's "robot" section.
type robotFrame struct {
	EvalIter  int      `json:"eval_iter"`           // iteration the bound, penalties, output messages and scores belong to
	Scores    []*num   `json:"scores"`              // LoopClosure of each hidden layer's message means (null: not available)
	Revisits  int      `json:"revisits"`            // the revisits the scores average over (0: the path has none, so no score)
	TimeScore num      `json:"time_score"`          // the time-only baseline
	TestRMSE  *num     `json:"test_rmse,omitempty"` // dBm, the output layer's predictive mean at the test scans
	MeanRMSE  *num     `json:"mean_rmse,omitempty"` // dBm, the training mean (baseline)
	GP1RMSE   *num     `json:"gp1_rmse,omitempty"`  // dBm, a one-layer sparse GP (baseline; absent until computed)
	Test      *testSec `json:"test,omitempty"`      // sent once per analysis
	// TestHidden are the hidden layers' messages at the test scans (sent
	// with Test): where the model puts scans it never saw, from time alone.
	TestHidden []testSec `json:"test_hidden,omitempty"`
	NewOutput  bool      `json:"new_output"` // this frame carries the output layer's mean/var
	// Restarts are the preset's restarts (absent for a single start).
	Restarts *restartsFrame `json:"restarts,omitempty"`
}

type testSec struct {
	N    int `json:"n"`
	D    int `json:"d"`
	Mean Ref `json:"mean"`
	Var  Ref `json:"var"`
}

// robotFrame builds a frame for robot data (see robot.go).
func (f *framer) robotFrame(s *snapshot) ([]byte, error) {
	if f.rob == nil {
		f.rob = &robotFramer{}
	}
	rf := f.rob
	a := rf.current(s, func(m *engine.Model, iter int, applied int64) *robotAnalysis {
		return analyze(m, s.robot, iter, applied)
	})
	m := s.model
	h := f.header(s)
	var e encoder
	res := a.res
	if a.err != nil {
		h.EvalError = a.err.Error()
	} else {
		h.Bound, h.Likelihood = numPtr(res.Bound), numPtr(res.Likelihood)
	}
	// The hidden layers' messages now: a forward pass without Ψ₂.
	nl := len(m.Layers)
	var hidden []engine.Message
	if nl > 1 && a.err == nil {
		if msgs, err := f.ev.PredictLayers(m, m.X, nl-1); err == nil {
			hidden = msgs
		}
	}
	newOut := a.seq != rf.sentSeq
	rf.sentSeq = a.seq
	for i, l := range m.Layers {
		_, q, d := l.Dims()
		lf := layerParams(&e, l)
		if res != nil {
			t := res.Layers[i]
			lf.KL, lf.Compression, lf.Propagation = numPtr(t.KL), numPtr(t.Compression), numPtr(t.Propagation)
			comp, prop := e.arr(t.CompressionPerDatum), e.arr(t.PropagationPerDatum)
			lf.Comp, lf.Prop = &comp, &prop
			msg := res.Messages[i]
			if i < len(hidden) {
				msg = hidden[i]
			}
			if i < nl-1 || newOut {
				mean, vr := e.arr(msg.Mean.RawMatrix().Data), e.arr(msg.Var.RawMatrix().Data)
				lf.Mean, lf.Var = &mean, &vr
			}
		}
		if q == 1 && d == 1 {
			lf.Grid = f.grid(&e, m, i, res)
		}
		h.Layers = append(h.Layers, lf)
	}
	rfr := &robotFrame{EvalIter: a.iter, TimeScore: num(s.robot.timeScore.Value), NewOutput: newOut && res != nil, Restarts: s.restarts.frame(s.restart)}
	for _, sc := range a.scores {
		rfr.Revisits = sc.Revisits
		if math.IsNaN(sc.Value) {
			rfr.Scores = append(rfr.Scores, nil)
		} else {
			rfr.Scores = append(rfr.Scores, numPtr(sc.Value))
		}
	}
	if rfr.Scores == nil {
		rfr.Scores = []*num{}
	}
	if !math.IsNaN(a.rmse) {
		rfr.TestRMSE = numPtr(a.rmse)
	}
	b := s.robot.baselines()
	if !math.IsNaN(b.MeanDBm) {
		rfr.MeanRMSE = numPtr(b.MeanDBm)
	}
	select {
	case <-b.done:
		b.mu.Lock()
		if !math.IsNaN(b.GP1DBm) {
			rfr.GP1RMSE = numPtr(b.GP1DBm)
		}
		b.mu.Unlock()
	default:
	}
	if newOut && a.test != nil {
		tn, td := a.test.Mean.Dims()
		rfr.Test = &testSec{N: tn, D: td, Mean: e.arr(a.test.Mean.RawMatrix().Data), Var: e.arr(a.test.Var.RawMatrix().Data)}
		for _, h := range a.testH {
			hn, hd := h.Mean.Dims()
			rfr.TestHidden = append(rfr.TestHidden, testSec{N: hn, D: hd, Mean: e.arr(h.Mean.RawMatrix().Data), Var: e.arr(h.Var.RawMatrix().Data)})
		}
	}
	h.Robot = rfr
	return e.finish(h)
}
