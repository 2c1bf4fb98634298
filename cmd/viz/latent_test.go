package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/stream"
	"dgpviz/internal/wire"
	"dgpviz/web"

	"github.com/gorilla/websocket"
)

// writeLoopCSV writes a small data set with what the explorer judges: a
// robot that drives twice round a circle of radius 10 m (so that rows 40
// apart revisit the same place), time as the input, 5 signals that fall
// off with the distance to 5 fixed beacons (with a deterministic
// wobble), the true path as truth columns, and the last 16 rows as a test
// split.
func writeLoopCSV(t *testing.T, dir string) string {
	t.Helper()
	const n, test = 80, 16
	beacons := [5][2]float64{{10, 0}, {0, 10}, {-10, 0}, {0, -10}, {3, 3}}
	var b strings.Builder
	b.WriteString("x_time,y1,y2,y3,y4,y5,truth_x,truth_y,split\n")
	for i := range n {
		a := 4 * math.Pi * float64(i) / n
		px, py := 10*math.Cos(a), 10*math.Sin(a)
		fmt.Fprintf(&b, "%d", 2*i)
		for k, bc := range beacons {
			d2 := (px-bc[0])*(px-bc[0]) + (py-bc[1])*(py-bc[1])
			fmt.Fprintf(&b, ",%.6f", -40-0.2*d2+0.5*math.Sin(float64(7*i+3*k)))
		}
		split := "train"
		if i >= n-test {
			split = "test"
		}
		fmt.Fprintf(&b, ",%.6f,%.6f,%s\n", px, py, split)
	}
	path := filepath.Join(dir, "loop.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// explorerNumbers are the explorer page's readout: the geometry scores of
// the hidden layers and of the baselines, and the held-out RMSEs.
type explorerNumbers struct {
	iter                        int
	scores, baselines           []any
	testRMSE, meanRMSE, gp1RMSE any
}

// TestLatentMatchesExplorer checks that `viz latent` on a model saved from
// a live explorer session gives the page's numbers for that model, to the
// last digit: both call the same functions (latent.Analyze,
// explorer.OneLayerGP) on the same model and data.
func TestLatentMatchesExplorer(t *testing.T) {
	dir := t.TempDir()
	data := "csv:" + writeLoopCSV(t, dir)
	const gpIters = 150 // the page's baseline fit, shortened (both sides)
	limits := admit.DefaultLimits()
	cat, err := dataset.NewCatalog([]string{data}, limits.MaxRows)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := stream.NewServer(stream.Options{Catalog: cat, Limits: limits, Defaults: admit.DefaultConfig(), Workers: 1, Logger: log, BaselineIters: gpIters})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(web.New(srv, srv, log))
	defer hs.Close()
	defer srv.Shutdown(context.Background())

	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(hs.URL, "http")+"/ws?data="+cat.NameOf(data)+"&hidden=2,2&m=10&play=0&speed=0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.Now().Add(120 * time.Second)
	var key string
	var setup map[string]any
	read := func() map[string]any {
		t.Helper()
		c.SetReadDeadline(deadline)
		mt, b, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if mt == websocket.TextMessage {
			var m map[string]any
			json.Unmarshal(b, &m)
			if m["type"] == "hello" {
				key, _ = m["figure_key"].(string)
			}
			if m["type"] == "error" {
				t.Fatalf("session error: %s", b)
			}
			return m
		}
		d, err := wire.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if d["type"] == "setup" {
			setup = d
		}
		return d
	}
	waitFrame := func(applied float64) map[string]any {
		t.Helper()
		for {
			if m := read(); m["type"] == "frame" && (applied == 0 || m["applied"] == applied) {
				return m
			}
		}
	}
	waitFrame(0)
	c.WriteJSON(map[string]any{"id": 1, "op": "step", "n": 40})
	waitFrame(1)
	// Paused, every frame carries an analysis of its own model; the
	// one-layer GP baseline arrives once fitted in the background.
	var page explorerNumbers
	for id := 2; ; id++ {
		c.WriteJSON(map[string]any{"id": id, "op": "pause"})
		f := waitFrame(float64(id))
		v := f["view"].(map[string]any)
		if v["gp1_rmse"] == nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		page = explorerNumbers{iter: int(f["iter"].(float64)), scores: v["scores"].([]any), testRMSE: v["test_rmse"], meanRMSE: v["mean_rmse"], gp1RMSE: v["gp1_rmse"]}
		if ei := int(v["eval_iter"].(float64)); ei != page.iter {
			t.Fatalf("the frame of iteration %d carries the analysis of iteration %d", page.iter, ei)
		}
		break
	}
	for _, b := range setup["view"].(map[string]any)["truth"].(map[string]any)["baselines"].([]any) {
		page.baselines = append(page.baselines, b.(map[string]any)["score"])
	}

	resp, err := http.Get(hs.URL + "/model.json?session=" + key)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var saved struct {
		Dataset struct {
			Iter int `json:"saved_at_iteration"`
		} `json:"dataset"`
	}
	if err := json.Unmarshal(body, &saved); err != nil || saved.Dataset.Iter != page.iter {
		t.Fatalf("the saved model is of iteration %d (%v), the page's numbers of %d", saved.Dataset.Iter, err, page.iter)
	}
	model := filepath.Join(dir, "model.json")
	if err := os.WriteFile(model, body, 0o644); err != nil {
		t.Fatal(err)
	}

	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"latent", "-model", model, "-data", data, "-gp-iters", fmt.Sprint(gpIters)}, &stdout, &stderr); err != nil {
		t.Fatalf("viz latent: %v\n%s", err, stderr.String())
	}
	var cli latentJSON
	if err := json.Unmarshal(stdout.Bytes(), &cli); err != nil {
		t.Fatal(err)
	}
	t.Logf("page at iteration %d: scores %v, baselines %v, test RMSE %v (mean %v, one-layer GP %v)", page.iter, page.scores, page.baselines, page.testRMSE, page.meanRMSE, page.gp1RMSE)
	same := func(what string, pageV any, cliV *float64) {
		t.Helper()
		p, ok := pageV.(float64)
		switch {
		case !ok || cliV == nil:
			t.Errorf("%s: page %v, viz latent %v: want numbers", what, pageV, cliV)
		case p != *cliV:
			t.Errorf("%s: page %.17g, viz latent %.17g", what, p, *cliV)
		}
	}
	g, h := cli.Geometry, cli.HeldOut
	if g == nil || h == nil || len(g.HiddenLayers) != len(page.scores) || len(g.Baselines) != len(page.baselines) || len(h.Baselines) != 2 {
		t.Fatalf("viz latent: %s", stdout.String())
	}
	if g.Revisits == 0 {
		t.Fatal("the loop has no revisits: the test scores nothing")
	}
	for i := range page.scores {
		same(fmt.Sprintf("hidden layer %d's geometry score", i+1), page.scores[i], g.HiddenLayers[i].Score)
	}
	for i := range page.baselines {
		same("geometry of "+g.Baselines[i].Name, page.baselines[i], g.Baselines[i].Value)
	}
	same("test RMSE", page.testRMSE, h.RMSE)
	same("the training mean's test RMSE", page.meanRMSE, h.Baselines[0].Value)
	same("the one-layer GP's test RMSE", page.gp1RMSE, h.Baselines[1].Value)
	if h.Units.RMSE != "original units" || g.Units.Radius != "original units" || g.HiddenLayers[0].Layer != 1 {
		t.Errorf("units %+v %+v, first hidden layer %d", h.Units, g.Units, g.HiddenLayers[0].Layer)
	}

	// The CSV form holds the same numbers.
	stdout.Reset()
	if err := run(context.Background(), []string{"latent", "-model", model, "-data", data, "-gp-iters", "0", "-format", "csv"}, &stdout, &stderr); err != nil {
		t.Fatalf("viz latent -format csv: %v\n%s", err, stderr.String())
	}
	rows, err := csv.NewReader(&stdout).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"geometry score", "hidden layer 1", fmt.Sprint(*g.HiddenLayers[0].Score), "", scoreUnit}
	if strings.Join(rows[0], ",") != "measure,of,value,std_err,unit" || strings.Join(rows[1], "|") != strings.Join(want, "|") || len(rows) != 1+2+2+2 {
		t.Errorf("CSV %v, want the header, 2 hidden layers, 2 baselines, the model's RMSE and the mean's", rows)
	}
}

// TestWithError: a sampled score reads with as many decimals as its
// standard error needs and says what was sampled.
func TestWithError(t *testing.T) {
	s := &sampleJSON{Rows: 20000, OfRows: 1000000, FarPairs: 200000, OfFarPairs: 281250375000, RevisitsPerRow: 100}
	for _, c := range []struct {
		v, se float64
		s     sampleJSON
		want  string
	}{
		{0.99, 0.003, *s, "0.990 ± 0.003 (20,000 of 1,000,000 rows, 200,000 of 281,250,375,000 far pairs sampled)"},
		{0.63804, 0.00071, sampleJSON{Rows: 3000, OfRows: 3000, FarPairs: 200000, OfFarPairs: 2532375}, "0.6380 ± 0.0007 (200,000 of 2,532,375 far pairs sampled)"},
		{0.5, 0.02, sampleJSON{Rows: 9, OfRows: 9, FarPairs: 5, OfFarPairs: 5, RevisitsPerRow: 2}, "0.500 ± 0.020 (at most 2 revisits a row sampled)"},
	} {
		if got := withError(c.v, c.se, &c.s); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", -1234567: "-1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
