package shards

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/engine"
	"dgpviz/internal/relay"

	"github.com/nats-io/nats.go"
)

// testRequest is a Part request of a two-layer model's shape.
func testRequest() *request {
	layers := []layerShape{{"rbf", 3, 1, 2}, {"rbfiso", 4, 2, 2}}
	n := 0
	for _, l := range layers {
		k, _ := engine.NewKernel(l.Kernel, l.Q)
		n += k.NumParams() + 1 + l.M*l.Q + l.M*l.D + l.D*l.M*(l.M+1)/2
	}
	params := make([]float64, n)
	for i := range params {
		params[i] = float64(i) / 7
	}
	return &request{Kind: Part, Gradient: true, Seq: 9, Lo: 100, Hi: 200, Chunk: 50, Jitter: 1e-6, Layers: layers, Params: params}
}

// TestWireRoundTrip: a request, each kind of reply and a failure decode
// to what was encoded, bit for bit, the engine's errors as themselves.
func TestWireRoundTrip(t *testing.T) {
	req := testRequest()
	got, err := decodeRequest(req.encode())
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != req.Kind || !got.Gradient || got.KL || got.NoCompensation || got.Seq != 9 || got.Lo != 100 || got.Hi != 200 || got.Chunk != 50 || got.Jitter != 1e-6 || !sameShape(got.Layers, req.Layers) || !equalBits(got.Params, req.Params) {
		t.Errorf("request %+v decoded as %+v", req, got)
	}
	preq := *req
	preq.NoCompensation = true
	if pgot, err := decodeRequest(preq.encode()); err != nil || !pgot.NoCompensation || !pgot.Gradient {
		t.Errorf("a request in float64 sums decoded as %+v (%v)", pgot, err)
	}
	breq := *req
	breq.Kind, breq.Rows, breq.Batch = BatchPart, []int{100, 150, 199}, 10
	bgot, err := decodeRequest(breq.encode())
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(bgot.Rows) != "[100 150 199]" || bgot.Batch != 10 {
		t.Errorf("a minibatch's part decoded with rows %v of %d", bgot.Rows, bgot.Batch)
	}
	breq.Rows = []int{99}
	if _, err := decodeRequest(breq.encode()); err == nil || !strings.Contains(err.Error(), "outside its range") {
		t.Errorf("a row outside the range: %v", err)
	}
	part := &partSums{Likelihood: -3.5, Layers: []engine.LayerTerms{{KL: 1, Compression: 2, Propagation: 3}, {KL: 4, Compression: 5, Propagation: 6}}, Gradient: req.Params}
	rep, err := decodeReply((&reply{Seq: 9, Lo: 100, Hi: 200, Worker: "w", Part: part}).encode(), req, "w")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Part.Likelihood != -3.5 || rep.Part.Layers[1].Propagation != 6 || rep.Part.Layers[0].KL != 1 || !equalBits(rep.Part.Gradient, part.Gradient) {
		t.Errorf("part %+v decoded as %+v", part, rep.Part)
	}
	sreq := *req
	sreq.Kind = Stats
	stats := &engine.FinalStats{Phi: make([]float64, 16), PhiLo: make([]float64, 16), VtY: make([]float64, 8)}
	stats.Phi[3], stats.PhiLo[5], stats.VtY[7] = 1.5, 1e-20, -2
	rep, err = decodeReply((&reply{Seq: 9, Lo: 100, Hi: 200, Worker: "w", Stats: stats}).encode(), &sreq, "w")
	if err != nil {
		t.Fatal(err)
	}
	if !equalBits(rep.Stats.Phi, stats.Phi) || !equalBits(rep.Stats.PhiLo, stats.PhiLo) || !equalBits(rep.Stats.VtY, stats.VtY) {
		t.Errorf("statistics %+v decoded as %+v", stats, rep.Stats)
	}
	fail := fmtError("layer 2: %w", engine.ErrNotPositiveDefinite)
	rep, err = decodeReply((&reply{Seq: 9, Lo: 100, Hi: 200, Worker: "w", Err: fail}).encode(), req, "w")
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(rep.Err, engine.ErrNotPositiveDefinite) || !strings.Contains(rep.Err.Error(), "layer 2") {
		t.Errorf("a failure decoded as %v", rep.Err)
	}
}

func fmtError(format string, err error) error {
	return errors.Join(errors.New(strings.Replace(format, "%w", err.Error(), 1)), err)
}

// TestForgedReply: a reply to another request (its number, rows or
// worker), one of another model's shape, or cut short is refused with an
// error that says so.
func TestForgedReply(t *testing.T) {
	req := testRequest()
	good := &reply{Seq: 9, Lo: 100, Hi: 200, Worker: "w", Part: &partSums{Layers: make([]engine.LayerTerms, 2), Gradient: req.Params}}
	b := good.encode()
	for name, tc := range map[string]struct {
		b      []byte
		worker string
		want   string
	}{
		"another evaluation": {(&reply{Seq: 8, Lo: 100, Hi: 200, Worker: "w", Part: good.Part}).encode(), "w", "another request"},
		"other rows":         {(&reply{Seq: 9, Lo: 0, Hi: 200, Worker: "w", Part: good.Part}).encode(), "w", "another request"},
		"another worker":     {b, "v", "another request"},
		"fewer layers":       {(&reply{Seq: 9, Lo: 100, Hi: 200, Worker: "w", Part: &partSums{Layers: make([]engine.LayerTerms, 1), Gradient: req.Params}}).encode(), "w", "1 layers"},
		"a short gradient":   {(&reply{Seq: 9, Lo: 100, Hi: 200, Worker: "w", Part: &partSums{Layers: make([]engine.LayerTerms, 2), Gradient: req.Params[:3]}}).encode(), "w", "gradient has 3 values"},
		"cut short":          {b[:len(b)-1], "w", "ends within"},
		"trailing bytes":     {append(b[:len(b):len(b)], 0), "w", "after its end"},
		"not a reply":        {[]byte("hello"), "w", "not the reply"},
	} {
		_, err := decodeReply(tc.b, req, tc.worker)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, tc.want)
		}
	}
}

// FuzzDecodeReply: no reply, however malformed, panics the decoder or
// allocates beyond its own size; what decodes re-encodes to itself.
func FuzzDecodeReply(f *testing.F) {
	req := testRequest()
	f.Add((&reply{Seq: 9, Lo: 100, Hi: 200, Worker: "w", Part: &partSums{Layers: make([]engine.LayerTerms, 2), Gradient: req.Params}}).encode())
	f.Add((&reply{Seq: 9, Lo: 100, Hi: 200, Worker: "w", Err: engine.ErrNotFinite}).encode())
	f.Add([]byte("DGPR"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rep, err := decodeReply(b, req, "w")
		if err != nil {
			return
		}
		if rep.Err == nil && rep.Part == nil {
			t.Fatal("a reply without a part or an error decoded")
		}
	})
}

// FuzzDecodeRequest: no request, however malformed, panics the decoder,
// and a model it accepts has its parameters in the payload.
func FuzzDecodeRequest(f *testing.F) {
	f.Add(testRequest().encode())
	s := testRequest()
	s.Kind = Stats
	f.Add(s.encode())
	s.Kind, s.Rows, s.Batch = BatchPart, []int{120, 130}, 5
	f.Add(s.encode())
	f.Add([]byte("DGPQ"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRequest(b)
		if err != nil {
			return
		}
		if 8*len(r.Params) > len(b) || r.Lo >= r.Hi || len(r.Layers) == 0 {
			t.Fatalf("an impossible request decoded: %d parameters from %d bytes, rows %d to %d", len(r.Params), len(b), r.Lo, r.Hi)
		}
	})
}

// TestWorkerRefusesMalformed: a worker answers a malformed request, and
// one for data it has not read, with an error, and goes on serving.
func TestWorkerRefusesMalformed(t *testing.T) {
	w := &Worker{Fit: "f", ID: "w"}
	none := &request{Layers: []layerShape{{}}}
	for name, tc := range map[string]struct {
		b   []byte
		req *request
	}{
		"garbage":      {[]byte("\x00\x01"), none},
		"cut short":    {testRequest().encode()[:30], none},
		"no data read": {testRequest().encode(), testRequest()},
		"bad data":     {[]byte(`DGPD{"spec":""}`), none},
	} {
		rep, err := decodeReply(w.answer(tc.b), tc.req, "w")
		if err != nil {
			t.Fatalf("%s: the worker's reply: %v", name, err)
		}
		if rep.Err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestWorkerPermissions: a worker's credentials reach its fit's subjects
// alone: it cannot hear another fit's requests nor publish as a
// coordinator; another fit's worker cannot answer this fit's coordinator
// nor announce itself to it.
func TestWorkerPermissions(t *testing.T) {
	c := newCluster(t, 100)
	other := newCreds(t)
	ns, err := relay.StartNATS("127.0.0.1:0", relay.ServerOptions{Users: []relay.User{
		{Key: c.coordinator.PublicKey(), Role: relay.Coordinator, Fit: c.fit},
		{Key: c.worker.PublicKey(), Role: relay.Worker, Fit: c.fit},
		{Key: other.PublicKey(), Role: relay.Worker, Fit: "another-fit"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Shutdown()
	c.url = ns.ClientURL()
	violations := func(name string, creds *relay.Credentials) (*nats.Conn, chan error) {
		errs := make(chan error, 16)
		nc, err := relay.Connect(c.url, relay.ConnectOptions{Name: name, Credentials: creds})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		nc.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err })
		t.Cleanup(nc.Close)
		return nc, errs
	}
	expectViolation := func(what string, errs chan error) {
		t.Helper()
		select {
		case err := <-errs:
			if !errors.Is(err, nats.ErrPermissionViolation) {
				t.Errorf("%s: %v, want a permission violation", what, err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s: allowed", what)
		}
	}
	fit := relay.FitSubject(c.fit)
	worker, werrs := violations("worker", c.worker)
	worker.SubscribeSync(relay.FitSubject("another-fit") + ".work.x")
	worker.Flush()
	expectViolation("a worker subscribes to another fit's requests", werrs)
	worker.Publish(fit+".work.x", []byte("DGPQ"))
	worker.Flush()
	expectViolation("a worker sends a request", werrs)
	worker.SubscribeSync(fit + ".hello")
	worker.Flush()
	expectViolation("a worker listens to the announcements", werrs)
	stranger, serrs := violations("another fit's worker", other)
	stranger.Publish(fit+".hello", []byte("intruder"))
	stranger.Flush()
	expectViolation("another fit's worker announces itself", serrs)
	stranger.SubscribeSync(fit + ".work.*")
	stranger.Flush()
	expectViolation("another fit's worker listens to the fit's requests", serrs)
	// This fit's worker is heard and used; the stranger's announcement
	// never arrived.
	w := c.startWorker("ok")
	co := c.coordinate(Options{ChunkRows: 50})
	waitWorkers(t, co, 1)
	if ids, _ := co.live(); len(ids) != 1 || ids[0] != "ok" {
		t.Errorf("the coordinator hears %v, want [ok]", ids)
	}
	w.kill()
}

// FuzzDecodeData: no data description, however malformed, panics the
// decoder, and one it accepts names a file, its checksum and its shape.
func FuzzDecodeData(f *testing.F) {
	f.Add(Data{Spec: "/data/walk.csv", SHA256: strings.Repeat("ab", 32), Size: 10, Rows: 9, Inputs: 1, Outputs: 30}.encode())
	f.Add(Data{Spec: "csv:/d.csv", SHA256: strings.Repeat("0", 64), URL: "https://example.org/d.csv", Size: 5, Rows: 1, Inputs: 1, Outputs: 1}.encode())
	f.Add([]byte(`DGPD{"spec":""}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeData(b)
		if err != nil {
			return
		}
		if d.Spec == "" || len(d.SHA256) != 64 || d.Rows < 1 {
			t.Fatalf("an impossible description decoded: %+v", d)
		}
	})
}
