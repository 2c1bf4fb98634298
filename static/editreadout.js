// The edit's readout: what the last edit itself did to the bound, frozen
// at the moment of the edit — the bound before and after, the effect of
// every layer's terms and of the likelihood, the largest one marked — and,
// apart from it, the optimizer's recovery since, as it happens. The
// numbers are the server's (frames' "edit", docs/protocol.md): its own
// evaluations of the model just before and just after the edit. One card
// for the page, on the panel that was edited, in a corner of its plot
// where it hides no handle (elsewhere if none is free). Followers see it
// too, without the buttons.
import { fmt, getDrawScale } from "./plot.js";

const LINGER = 8000; // ms the card stays once the optimizer has stopped
const MARGIN = 10;   // px kept between the card and a handle

// signed writes a change with its sign; only a change of nothing (below
// a billionth of a nat: the evaluations' rounding) reads 0, so that a
// change shown is never zero (fmt goes to exponents below 10⁻³).
export const signed = (v) => (Math.abs(v) < 1e-9 ? "0" : `${v > 0 ? "+" : "−"}${fmt(Math.abs(v))}`);

// pair writes two values with as many significant digits as they need
// to read differently (at least fmt's four), so "before → after" never
// shows the same number twice for a change.
export function pair(a, b) {
  const f = (v, p) => (Math.abs(v) >= 1e5 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(p - 1) : Number(v.toPrecision(p)).toString()).replace("-", "−");
  let p = 4;
  while (p < 12 && a !== b && f(a, p) === f(b, p)) p++;
  return [f(a, p), f(b, p)];
}

// effects returns the edit's effect on the bound, term by term: the
// likelihood's change, and minus each penalty's change (a penalty that
// grows lowers the bound), so that they add up to Δ bound.
export function effects(before, after) {
  const rows = after.kl.map((_, i) => [-(after.kl[i] - before.kl[i]), -(after.compression[i] - before.compression[i]), -(after.propagation[i] - before.propagation[i])]);
  return { bound: after.bound - before.bound, lik: after.likelihood - before.likelihood, rows };
}

export function editReadout(app) {
  const card = document.createElement("div");
  card.className = "edit-card";
  card.dataset.testid = "edit-readout";
  card.setAttribute("role", "status");
  card.hidden = true;
  let seq = -1, key = "", stoppedAt = 0, dismissed = -1, corner = "tr", host = null;

  card.addEventListener("click", (e) => {
    const b = e.target.closest("button");
    if (!b) return;
    if (b.dataset.act === "close") { dismissed = seq; card.hidden = true; }
    if (b.dataset.act === "undo") app.send({ op: "undo" });
  });

  // hostOf returns the plot the edit belongs to: the edited layer's, the
  // fit's for data edits, else the bound's.
  function hostOf(ed) {
    const id = ed.layer >= 0 ? `panel-layer-${ed.layer}` : ed.data ? "panel-fit" : "panel-bound";
    return document.getElementById(id)?.querySelector(".plot") ?? null;
  }

  // handlesOn returns the client positions of the handles drawn on a
  // panel's plot: its inducing points, or the fit's data points.
  function handlesOn(plotEl) {
    const panel = plotEl.closest("section");
    const li = panel?.dataset.layer;
    if (li !== undefined) {
      const m = app.state.frame?.layers?.[Number(li)]?.m ?? 0;
      return [...Array(m).keys()].map((k) => app.handle(Number(li), k)).filter(Boolean);
    }
    if (panel?.id === "panel-fit") return app.panels.fit?.handlePoints?.() ?? [];
    return [];
  }

  // place puts the card in a corner of plotEl that holds no handle,
  // keeping its corner while it stays free; false when none is free.
  function place(plotEl) {
    const r = plotEl.getBoundingClientRect(), w = card.offsetWidth, h = card.offsetHeight;
    const hs = handlesOn(plotEl).map(([x, y]) => [x - r.left, y - r.top]);
    // Clear of the axes' labels, which grow with presentation mode's type
    // scale: the plots' left margins are at most 64 logical pixels, the
    // bottom ones 40.
    const k = getDrawScale(), l = 66 * k, b = 44 * k;
    const at = { tr: [r.width - w - 14, 8], tl: [l, 8], br: [r.width - w - 14, r.height - h - b], bl: [l, r.height - h - b] };
    const free = (c) => {
      const [x, y] = at[c];
      if (x < 0 || y < 0) return false;
      return hs.every(([hx, hy]) => hx < x - MARGIN || hx > x + w + MARGIN || hy < y - MARGIN || hy > y + h + MARGIN);
    };
    const order = [corner, "tr", "tl", "br", "bl"];
    const c = order.find(free);
    if (!c) return false;
    corner = c;
    card.style.setProperty("left", `${at[c][0]}px`);
    card.style.setProperty("top", `${at[c][1]}px`);
    return true;
  }

  function render(f, ed) {
    const follower = !!app.state.follower;
    const before = ed.before, after = ed.after;
    let html = `<div class="ec-head"><span class="ec-what">${escape(ed.label)}</span>${follower ? "" : '<button type="button" data-act="close" title="Hide this readout" aria-label="hide">×</button>'}</div>`;
    if (before && after) {
      const e = effects(before, after);
      let big = Math.abs(e.lik);
      for (const r of e.rows) for (const v of r) big = Math.max(big, Math.abs(v));
      const cell = (v) => `<td${big > 5e-4 && Math.abs(v) === big ? ' class="big"' : ""}>${signed(v)}</td>`;
      const [b0, b1] = pair(before.bound, after.bound);
      html += `<div class="ec-delta" data-testid="edit-delta"><b>the edit: Δ bound ${signed(e.bound)} nats</b> <span>${b0} → ${b1}</span></div>` +
        `<table class="delta"><tr><th>effect on the bound</th><th>KL</th><th>compr.</th><th>propag.</th></tr>` +
        e.rows.map((r, i) => `<tr><th>layer ${i + 1}</th>${r.map(cell).join("")}</tr>`).join("") +
        `<tr class="lik"><th>likelihood</th>${cell(e.lik)}<td colspan="2"></td></tr></table>`;
    } else if (after) {
      html += `<div class="ec-delta" data-testid="edit-delta"><b>bound after the edit ${fmt(after.bound)} nats</b></div>`;
    } else {
      html += `<div class="ec-delta" data-testid="edit-delta"><b>the edited model cannot be evaluated</b></div>`;
    }
    html += `<div class="ec-recovery" data-testid="edit-recovery">${recovery(f, ed, follower)}</div>`;
    return html;
  }

  // recovery says what the optimizer has done since the edit.
  function recovery(f, ed, follower) {
    if (f.bound == null || !ed.after) return "";
    const gained = f.bound - ed.after.bound, gap = ed.before ? f.bound - ed.before.bound : NaN;
    const its = f.iter - ed.iter;
    const vs = Number.isFinite(gap) ? ` · bound ${fmt(f.bound)}, ${gap >= 0 ? "+" : "−"}${fmt(Math.abs(gap))} from before the edit` : ` · bound ${fmt(f.bound)}`;
    const undo = follower ? "" : ' <button type="button" data-act="undo" data-testid="edit-undo" title="Undo the edit (Ctrl+Z)">↶ Undo</button>';
    if (f.held) return "recovery: waits for the drag to end";
    if (f.running) return `recovering: ${signed(gained)} nats in ${its} iterations${vs}`;
    if (f.collapse) return `the model has collapsed (layer ${f.collapse.layer + 1}): undo the edit to get it back.${undo}`;
    if (its === 0 && f.paused) return `paused: press Play (space) and the optimizer repairs what the edit cost.`;
    if (f.paused) return `paused after ${signed(gained)} nats in ${its} iterations${vs}`;
    if (!Number.isFinite(gap) || gap >= -1) return `recovered: ${signed(gained)} nats in ${its} iterations${vs}`;
    return `settled ${fmt(-gap)} nats below where it was before the edit.${undo}`;
  }

  return {
    draw(s) {
      const f = s.frame, ed = f?.edit;
      if (!ed || ed.seq === dismissed) { card.hidden = true; if (!ed) seq = -1; return; }
      const now = performance.now();
      if (ed.seq !== seq) { seq = ed.seq; stoppedAt = 0; corner = "tr"; }
      const active = f.running || f.held;
      if (active) stoppedAt = 0; else if (!stoppedAt) stoppedAt = now;
      const bad = !!f.collapse || (ed.before && f.bound != null && f.bound < ed.before.bound - 1 && !f.paused);
      if (stoppedAt && now - stoppedAt > LINGER && !bad) { card.hidden = true; return; }
      const h = hostOf(ed);
      if (!h || h.offsetParent === null) { card.hidden = true; return; }
      const html = render(f, ed);
      if (html !== key) { card.innerHTML = html; key = html; }
      if (card.parentElement !== h) { h.append(card); host = h; }
      card.hidden = false;
      if (!place(h)) {
        // no free corner: the bound panel, which has no handles
        const b = document.getElementById("panel-bound")?.querySelector(".plot");
        if (b && b !== h && b.offsetParent !== null) { b.append(card); host = b; corner = "tl"; place(b); }
      }
      if (stoppedAt && !bad) setTimeout(() => app.redraw(), LINGER + 50); // to hide it
    },
    element: card,
    host: () => host,
  };
}

function escape(s) {
  return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}
