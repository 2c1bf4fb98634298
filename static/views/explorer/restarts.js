// The restarts a preset ran (web/robot.templ's table): each one's start,
// iterations, bound and score (the geometry of its first hidden layer,
// where the data carry ground truth), the one the bound kept (★) and the
// live one; "use" makes one the live model (the "restart" op; undo goes
// back). Restarts are counted from 1. Hidden when the model was not chosen
// among restarts. A follower, who cannot switch, gets no "use" column
// (style.css: body.follower .restart-use).
import { el } from "../dom.js";

// createRestarts fills the table under root; send sends a command.
export function createRestarts(root, send) {
  const box = root.querySelector("[data-testid='explorer-restarts']"), body = box?.querySelector("tbody");
  let shown = null; // the restarts in the table
  return {
    // draw shows rs ({chosen, live, list}, or null), rebuilding the rows
    // only when they change.
    draw(rs) {
      if (!box) return;
      box.hidden = !rs;
      const key = rs ? JSON.stringify(rs) : "";
      if (!rs || shown === key) return;
      shown = key;
      const th = box.querySelector("[data-testid='explorer-restarts-score']");
      if (th) th.textContent = rs.score_name || "score";
      body.replaceChildren(...rs.list.map((r) => {
        const live = r.restart === rs.live;
        const use = el("button", { type: "button", "data-testid": `explorer-restart-use-${r.restart}`,
          title: live ? "The live model started from this restart" : `Continue from restart ${r.restart}'s model (undo goes back)` }, live ? "live" : "use");
        if (live || r.bound == null) use.disabled = true;
        use.addEventListener("click", () => send({ op: "restart", restart: r.restart }));
        return el("tr", { "data-testid": `explorer-restart-${r.restart}`, class: live ? "live" : "" },
          el("td", { text: `${r.restart}${r.restart === rs.chosen ? " ★" : ""}` }),
          el("td", { text: r.start === "linear" ? "the input" : r.start === "pca" ? "principal components of the outputs" : r.start }),
          el("td", { text: String(r.iters) }),
          el("td", { text: r.bound != null ? r.bound.toFixed(1) : r.failure || "failed" }),
          el("td", { text: r.score != null ? r.score.toFixed(3) : "–" }),
          el("td", { class: "restart-use" }, use));
      }));
    },
  };
}
