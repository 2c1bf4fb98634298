// Downloads for slides: every panel's "⤓" button opens a menu of its
// figure as SVG, PNG and PDF — 16:9, with axis labels, a legend and the
// iteration in a caption line, drawn by the server (web/figure.go,
// internal/slides). Opening the menu pins the session's model as it is
// (GET /figure/pin), so that the three formats show the same iteration
// however long the optimizer runs before each click.

// figureOf returns the figure a panel downloads, with its parameters, or
// null when the panel has none.
function figureOf(section, app) {
  const s = app.state;
  if (section.dataset.layer !== undefined) {
    const li = Number(section.dataset.layer), L = s.frame?.layers?.[li];
    if (!L || L.q !== 1 || L.d !== 1) return null;
    return { name: "layer", what: `layer ${li + 1}`, q: { layer: String(li + 1) } };
  }
  switch (section.id) {
    case "panel-fit":
      if (!(s.setup?.q === 1 && s.setup?.d === 1)) return null;
      // the samples view downloads as the paper's step figure
      return s.show?.name === "samples" ? { name: "samples", what: "the samples through the network", q: {} } : { name: "fit", what: "the fit", q: {} };
    case "panel-bound": return { name: "bound", what: "the bound", q: {} };
    case "panel-depth": return { name: "depth", what: "the depth comparison", q: {} };
    case "panel-messages": {
      const m = app.panels.messages?.downloadQuery?.();
      return m ? { name: "messages", what: "the message figure", q: m } : null;
    }
    case "panel-explorer": return { name: "latent", what: "the latent views", q: {} };
    case "panel-autoencoder": return { name: "faces", what: "the latent map", q: {} };
  }
  return null;
}

export function downloads(app) {
  const menu = document.createElement("div");
  menu.className = "dl-menu";
  menu.dataset.testid = "download-menu";
  menu.setAttribute("role", "menu");
  menu.hidden = true;
  document.body.append(menu);
  let forBtn = null;

  const close = () => { menu.hidden = true; forBtn = null; };
  document.addEventListener("click", async (e) => {
    const b = e.target.closest("[data-download]");
    if (!b) { if (!e.target.closest(".dl-menu")) close(); return; }
    e.preventDefault();
    if (forBtn === b) { close(); return; }
    const section = b.closest("section");
    const fig = section && figureOf(section, app);
    const key = app.state.figureKey;
    if (!fig || !key) { app.say(!key ? "downloads are the presenter's (a follower can Fork to get their own)" : "this panel has no figure to download", "error"); return; }
    forBtn = b;
    const r = b.getBoundingClientRect();
    menu.style.setProperty("top", `${Math.round(r.bottom + 4)}px`);
    menu.style.setProperty("left", `${Math.round(Math.max(8, Math.min(innerWidth - 260, r.right - 240)))}px`);
    menu.textContent = "pinning the model…";
    menu.hidden = false;
    let pin;
    try {
      const res = await fetch(`/figure/pin?session=${encodeURIComponent(key)}`);
      if (!res.ok) throw new Error((await res.text()).trim());
      pin = await res.json();
    } catch (err) { menu.textContent = `Could not pin the model: ${err.message}`; return; }
    if (forBtn !== b) return;
    const head = document.createElement("div");
    head.className = "dl-head";
    head.textContent = `${fig.what} at iteration ${pin.iter}, 16:9:`;
    const row = document.createElement("div");
    row.className = "dl-links";
    for (const fmt of ["svg", "png", "pdf"]) {
      const a = document.createElement("a");
      a.href = `/figure/${fig.name}.${fmt}?${new URLSearchParams({ session: key, pin: pin.pin, ...fig.q })}`;
      a.download = "";
      a.textContent = fmt.toUpperCase();
      a.dataset.testid = `download-${fmt}`;
      a.setAttribute("role", "menuitem");
      row.append(a);
    }
    const note = document.createElement("div");
    note.className = "dl-note";
    note.textContent = "every format from this one snapshot";
    // Every panel the page offers, in every format, as one zip from the
    // same snapshot (web/figurezip.go): one download for the handouts.
    const parts = [];
    for (const sec of document.querySelectorAll("section")) {
      // a view's panels another view's session hides (the explorer's on
      // the regression demo) are not on offer; a slide's are
      const f = !sec.closest("[hidden]") && sec.querySelector("[data-download]") && figureOf(sec, app);
      if (!f || (f.name === "depth" && !app.panels.depth?.done?.())) continue;
      const fq = new URLSearchParams(f.q).toString();
      for (const fmt of ["svg", "png", "pdf"]) parts.push(`${f.name}.${fmt}${fq ? `?${fq}` : ""}`);
    }
    const all = document.createElement("a");
    all.href = `/figure/panels.zip?${new URLSearchParams([["session", key], ["pin", pin.pin], ...parts.map((p) => ["part", p])])}`;
    all.download = "";
    all.textContent = `every panel (${parts.length / 3} × SVG, PNG, PDF), one zip`;
    all.dataset.testid = "download-zip";
    all.setAttribute("role", "menuitem");
    all.className = "dl-all";
    menu.replaceChildren(head, row, note, all);
  });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") close(); });
}
