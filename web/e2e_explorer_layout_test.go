package web

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"dgpviz/internal/dataset"

	"github.com/chromedp/chromedp"
)

// explorerLayout returns what a lecturer would flag in the latent
// explorer at the window's size ("" when nothing): a hidden layer's view
// narrower than minShare of the explorer's body; any label a view draws
// (Plot.text: ticks, titles, keys) outside its canvas, within 2 px of
// another label (tick labels run together), or over a mark (Plot.mark: a
// plot's own room, as the penalties' areas); a control of the explorer's
// tools out of its panel.
const explorerLayout = `((minShare) => {
  const out = [];
  const shown = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const panel = document.getElementById("panel-explorer"), pr = panel.getBoundingClientRect();
  const body = panel.querySelector(".explorer-body").getBoundingClientRect();
  for (const v of panel.querySelectorAll('.rv.latent')) {
    const w = v.getBoundingClientRect().width;
    if (w < minShare * body.width) out.push(v.dataset.testid + " " + Math.round(w) + " px of the explorer's " + Math.round(body.width));
  }
  for (const el of panel.querySelectorAll(".panel-tools > *")) {
    if (!shown(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.right > pr.right + 1 || r.left < pr.left - 1) out.push(JSON.stringify(el.textContent.trim()) + " out of the panel");
  }
  const near = (a, b) => Math.min(a.r, b.r) - Math.max(a.l, b.l) > -2 && Math.min(a.b, b.b) - Math.max(a.t, b.t) > 0.5;
  const over = (a, b) => Math.min(a.r, b.r) - Math.max(a.l, b.l) > 0.5 && Math.min(a.b, b.b) - Math.max(a.t, b.t) > 0.5;
  let labels = 0;
  for (const c of panel.querySelectorAll("canvas")) {
    if (!shown(c) || !c.drawn) continue;
    const cr = c.getBoundingClientRect(), L = c.drawn.labels, id = c.dataset.testid;
    labels += L.length;
    for (const [i, a] of L.entries()) {
      if (a.l < -1 || a.t < -1 || a.r > cr.width + 1 || a.b > cr.height + 1) out.push(id + ": " + JSON.stringify(a.text) + " leaves its canvas");
      for (const b of L.slice(i + 1)) if (near(a, b)) out.push(id + ": " + JSON.stringify(a.text) + " runs into " + JSON.stringify(b.text));
      if (c.drawn.marks.some((m) => over(a, m))) out.push(id + ": " + JSON.stringify(a.text) + " drawn over the plot");
    }
  }
  if (labels < 20) out.push("only " + labels + " labels drawn");
  // The top bar's actions wrap as one group: "?" on Lesson's line.
  const top = (id) => document.getElementById(id).getBoundingClientRect();
  if (Math.abs(top("help-open").bottom - top("lesson-open").bottom) > 2) out.push("the top bar's ? is not on Lesson's line");
  return [...new Set(out)].join("; ");
})`

// roomsCSV is a small table without ground truth: three rooms'
// temperatures over two days, every tenth row held out.
func roomsCSV() string {
	var b strings.Builder
	b.WriteString("x_time [h],y_kitchen [°C],y_attic [°C],y_cellar [°C],split\n")
	for i := range 80 {
		t := 0.6 * float64(i)
		d := math.Sin(2 * math.Pi * t / 24)
		split := "train"
		if i%10 == 9 {
			split = "test"
		}
		fmt.Fprintf(&b, "%.1f,%.2f,%.2f,%.2f,%s\n", t, 20+3*d+0.3*math.Sin(7*t), 18+9*d, 12+0.5*math.Cos(3*t), split)
	}
	return b.String()
}

// TestBrowserExplorerLayout: the latent explorer reads at a projector's
// 1024×768, at 1280×720 and at 1920×1080, on the page and in presentation
// mode: below 1400 px every hidden layer's view has the explorer's whole
// width (it had two thirds, each small plot 140 px, beside the ground
// truth), above it more than half, and all of it for data without ground
// truth (the second layer had a third, in the ground truth's column); no
// tick label, title or key leaves its canvas, runs into another or covers
// a plot; the tools stay in their panel; the held-out verdict never calls
// two numbers it prints alike worse or better. On the small robot fixture
// and a generated table, so it needs no ../shared data.
func TestBrowserExplorerLayout(t *testing.T) {
	exe := requireBrowser(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	robot, err := dataset.LoadRobot(filepath.Join("..", "internal", "dataset", "testdata", "robot_small.txt"))
	if err != nil {
		t.Fatal(err)
	}
	rooms, err := dataset.ReadCSV(strings.NewReader(roomsCSV()), "rooms", dataset.CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := robotServer(t, robot, 100, log, rooms)
	e := startE2E(t, exe, srv, log, 1024, 768)
	open := func(query string) {
		t.Helper()
		e.run(chromedp.Navigate(e.base + "/" + query))
		e.waitFor("the explorer", `window.dgpviz && window.dgpviz.panels.explorer && window.dgpviz.panels.explorer.stats.draws > 3 && !document.getElementById("panel-explorer").hidden`)
		e.waitFor("the held-out rows' analysis", `window.dgpviz.state.frame.view && window.dgpviz.state.frame.view.test_rmse != null && document.querySelector('[data-testid="rmse-verdict"]').textContent !== ""`)
		e.eval(`window.dgpviz.send({op: "pause"}), true`, nil)
		e.waitFor("paused", `window.dgpviz.state.frame.running === false`)
		// the top bar at its widest, as a finished fit leaves it
		e.eval(`document.getElementById("status").textContent = "converged (function convergence)", true`, nil)
	}
	check := func(what string, sizes [][2]int64, share func(w int64) float64) {
		t.Helper()
		for _, sz := range sizes {
			e.run(chromedp.EmulateViewport(sz[0], sz[1]))
			e.settle()
			e.settle()
			if p := evalAs[string](e, fmt.Sprintf("%s(%v)", explorerLayout, share(sz[0]))); p != "" {
				t.Errorf("%s at %d×%d: %s", what, sz[0], sz[1], p)
			}
			if sz[0] == 1024 {
				e.screenshot(fmt.Sprintf("explorer-layout-%s-%dx%d.png", strings.ReplaceAll(what, " ", "-"), sz[0], sz[1]), `[data-testid="panel-explorer"]`)
			}
		}
	}
	all := [][2]int64{{1024, 768}, {1280, 720}, {1920, 1080}}
	beside := func(w int64) float64 {
		if w > 1400 {
			return 0.5 // beside the ground truth
		}
		return 0.9
	}
	open("")
	check("robot", all, beside)
	// The held-out toggle says the data's word for a row, as the titles do.
	if label := e.text(`[data-testid="explorer-show-test-label"]`); label != "held-out scans" {
		t.Errorf("the held-out toggle of the robot's scans says %q, want \"held-out scans\"", label)
	}
	// The bound's per-layer terms carry their unit.
	if head := evalAs[string](e, `document.querySelector('[data-testid="bound-terms"] tr').textContent`); strings.Count(head, "(nats)") != 3 {
		t.Errorf("the bound's terms table heads %q: want KL, compression and propagation in nats", head)
	}
	// Its hidden layers are 3-D: the message figure has no layer to show,
	// and its button says so instead of opening an empty figure.
	if why := evalAs[string](e, `(() => { const b = document.querySelector('[data-testid="mc-toggle"]'); return b.disabled ? b.title : ""; })()`); !strings.Contains(why, "1-D input and output") {
		t.Errorf("the message figure's button with no 1-D layer: disabled with a reason %q, want one naming the 1-D layer it needs", why)
	}
	e.eval(`document.activeElement.blur(), true`, nil)
	e.run(chromedp.KeyEvent("p"))
	e.waitFor("presentation mode", `document.body.classList.contains("present")`)
	check("robot presenting", all, beside)
	e.noErrors()

	open("?data=csv%3Arooms")
	check("rooms", [][2]int64{{1920, 1080}, {1024, 768}}, func(int64) float64 { return 0.9 })
	// No ground truth: no revisits to show, and no toggle for them.
	if evalAs[bool](e, `document.querySelector('[data-testid="explorer-show-revisits"]').getBoundingClientRect().width > 0`) {
		t.Error("data without ground truth show a revisits toggle")
	}
	// The live verdict, and one of errors that read alike to one decimal
	// (0.44 against 0.43 °C: it said "0.4 °C does worse than 0.4 °C").
	apart := func(verdict string) {
		t.Helper()
		m := regexp.MustCompile(`\(([0-9.]+) °C\)`).FindAllStringSubmatch(verdict, -1)
		if len(m) < 2 {
			t.Fatalf("held-out verdict %q: want the deep GP's error and a baseline's, in °C", verdict)
		}
		for _, b := range m[1:] {
			if b[1] == m[0][1] {
				t.Errorf("held-out verdict %q compares %s with %s, which read the same", verdict, m[0][1], b[1])
			}
		}
	}
	// The bound's card: a large bound in whole nats, so that it moves as
	// it climbs; a small one to four significant digits.
	if got := evalAs[[]string](e, `import("/static/plot.js").then(({ fmtBound }) => [fmtBound(-1104352.4), fmtBound(-1104351.6), fmtBound(-5157.26), fmtBound(-0.76543)])`); !slices.Equal(got, []string{"-1,104,352", "-1,104,352", "-5157", "-0.7654"}) {
		t.Errorf("bounds written %q, want -1,104,352 twice, -5157, -0.7654", got)
	}
	verdict := evalAs[string](e, `document.querySelector('[data-testid="rmse-verdict"]').textContent`)
	apart(verdict)
	apart(evalAs[string](e, `import("/static/views/explorer/readout.js").then(({ readout }) => {
	  const root = document.createElement("div");
	  root.innerHTML = '<p data-testid="rmse-verdict"></p>';
	  const data = { unit: "°C", row: { many: "rows" }, input: { values: [0, 1, 2, 3], word: "time" }, n: 2, nAll: 4, test: { n: 2 }, columns: [], d: 3 };
	  readout(root, data, { testRMSE: 0.44, meanRMSE: 3.85, gp1RMSE: 0.43 });
	  return root.textContent;
	})`))
	t.Logf("verdict: %s", verdict)
	e.noErrors()
}
