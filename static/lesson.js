// Lessons: a guided walk through the paper on the live session. A lesson
// is data — one JSON file per lesson in static/lessons/, whose format
// docs/lessons.md describes (and web/lesson.go checks) — so a lecturer
// writes another without touching code. Each step drives the session (the
// model it needs, play or pause, the view, the message figure's preset,
// the depth comparison) and says in a few sentences what to look at.
// PageDown/PageUp (a clicker) and the bar's buttons go from step to step;
// followers see the same step (the slide "lesson=NAME&step=K").

const cache = new Map(); // lesson name → its data (a promise)

function load(name) {
  if (!cache.has(name)) {
    cache.set(name, fetch(`/static/lessons/${encodeURIComponent(name)}.json`).then((r) => {
      if (!r.ok) throw new Error(`no lesson "${name}"`);
      return r.json();
    }));
  }
  return cache.get(name);
}

export function lessons(app, { setShow, send, state, toast }) {
  const $ = (id) => document.getElementById(id);
  const bar = $("lesson");
  const list = JSON.parse(document.body.dataset.lessons || "[]"); // [{name, title, steps}]
  let cur = null; // {name, data, step}
  let wanted = new URLSearchParams(location.search).get("lesson") || "";

  $("lesson-prev").addEventListener("click", () => go(-1));
  $("lesson-next").addEventListener("click", () => go(+1));
  $("lesson-close").addEventListener("click", () => stop());
  const menu = $("lesson-menu");
  for (const l of list) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = `${l.title} (${l.steps} steps)`;
    b.dataset.testid = `lesson-${l.name}`;
    b.addEventListener("click", () => { menu.hidden = true; start(l.name); });
    menu.append(b);
  }
  $("lesson-open").addEventListener("click", () => {
    if (cur) { stop(); return; }
    if (list.length === 1) start(list[0].name);
    else menu.hidden = !menu.hidden;
  });
  $("lesson-open").hidden = list.length === 0;

  async function start(name, step = 0) {
    if (state.follower) return;
    let data;
    try { data = await load(name); } catch (e) { toast(`Could not open the lesson: ${e.message}`, "error"); return; }
    cur = { name, data, step: -1 };
    enter(step);
    // A step that compares the depths gets its fits started now, after
    // the first step's data, so that its slide is not blank on arrival.
    if (data.steps.some((st) => st.compare)) app.panels.depth?.start?.();
    app.urlChanged?.();
  }

  function stop() {
    if (!cur) return;
    cur = null;
    bar.hidden = true;
    focus([]);
    app.urlChanged?.();
    document.body.classList.remove("in-lesson");
    setShow({ name: "live", at: null });
  }

  function go(d) {
    if (!cur) return;
    const k = cur.step + d;
    if (k < 0) { toast("this is the lesson's first step"); return; }
    if (k >= cur.data.steps.length) { toast("that was the lesson's last step: Esc or ✕ closes it"); return; }
    enter(k);
  }

  // enter makes step k the current one: the session as it needs, then
  // the view, then the words.
  function enter(k) {
    const st = cur.data.steps[k];
    cur.step = k;
    if (!state.follower) {
      if (st.model) model(st.model);
      if (st.run === "play" && !state.running) send({ op: "play" });
      if (st.run === "pause" && state.running) send({ op: "pause" });
      if (st.message_figure) app.panels.messages?.preset?.(st.message_figure.layer - 1, st.message_figure.preset);
      if (st.compare) app.panels.depth?.start?.();
      if (st.watch_repair != null && st.watch_repair !== !!state.config?.watch_repair) send({ op: "speed", watch_repair: st.watch_repair });
    }
    const nx = state.setup?.norm_x;
    const at = st.at != null && nx ? (st.at - nx.mean[0]) / nx.scale[0] : null;
    render();
    setShow({ name: st.view || "live", at });
  }

  // model sends what changes the session into the step's model: only
  // what differs, so that going back and forth does not start it again.
  function model(m) {
    const c = state.config;
    if (m.data && m.data !== c.dataset) send({ op: "dataset", dataset: m.data });
    const hidden = m.hidden ?? c.hidden, inducing = m.inducing ?? c.inducing;
    if (hidden.length !== c.hidden.length || hidden.some((w, i) => w !== c.hidden[i]) || inducing !== c.inducing) {
      send({ op: "architecture", hidden, inducing });
    }
    if (m.seed != null && m.seed !== c.seed) send({ op: "reset", seed: m.seed });
  }

  function focus(names) {
    for (const el of document.querySelectorAll(".lesson-focus")) el.classList.remove("lesson-focus");
    for (const n of names) {
      let sel = [];
      const m = /^layer (\d+)$/.exec(n);
      if (m) sel = [`#panel-layer-${Number(m[1]) - 1}`];
      else if (n === "layers" || n === "penalties") sel = ["#layer-panels > section"];
      else sel = [`#panel-${n}`];
      for (const s of sel) for (const el of document.querySelectorAll(s)) el.classList.add("lesson-focus");
    }
  }

  function render() {
    const st = cur.data.steps[cur.step], n = cur.data.steps.length;
    $("lesson-where").textContent = `${cur.data.title} · step ${cur.step + 1} of ${n}`;
    $("lesson-title").textContent = st.title;
    $("lesson-text").textContent = st.text;
    $("lesson-prev").disabled = cur.step === 0 || state.follower;
    $("lesson-next").disabled = cur.step === n - 1 || state.follower;
    $("lesson-close").hidden = !!state.follower;
    bar.dataset.step = String(cur.step + 1);
    bar.hidden = false;
    document.body.classList.add("in-lesson");
    focus(st.focus ?? []);
    // the layer panels are made per frame: focus them again when they are
    setTimeout(() => cur && focus(cur.data.steps[cur.step].focus ?? []), 300);
  }

  return {
    // connected: a new connection (?lesson=NAME opens that lesson once).
    connected() {
      if (wanted && !state.follower) { const w = wanted; wanted = ""; start(w); }
      else if (cur && !state.follower) enter(cur.step); // the session is new: set it up again
    },
    toggle() { if (cur) stop(); else if (list.length) start(list[0].name); else toast("no lessons on this server"); },
    active: () => !!cur,
    go,
    current: () => (cur ? { name: cur.name, step: cur.step } : null),
    // follow shows the presenter's lesson step (a follower), or none.
    async follow(name, step) {
      if (!name) { if (cur) { cur = null; bar.hidden = true; focus([]); document.body.classList.remove("in-lesson"); } return; }
      let data;
      try { data = await load(name); } catch { return; }
      if (step < 0 || step >= data.steps.length) return;
      cur = { name, data, step };
      render();
    },
  };
}
