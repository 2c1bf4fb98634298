// Small DOM helpers shared by the views.

// el makes an element with attributes (class, text or any other) and children.
export function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v; else if (k === "text") e.textContent = v; else e.setAttribute(k, v);
  }
  e.append(...kids);
  return e;
}

// setText changes an element's text only when it differs (no layout otherwise).
export function setText(e, t) {
  if (e && e.textContent !== t) e.textContent = t;
}

// viewBox makes one of the explorer's views: a heading with tools and a
// canvas (data-testid explorer-KEY and explorer-KEY-canvas).
export function viewBox(key, title, cls, tools = []) {
  const cv = el("canvas", { "data-testid": `explorer-${key}-canvas`, role: "img", "aria-label": title });
  const root = el("div", { class: `rv ${cls}`, "data-testid": `explorer-${key}` },
    el("div", { class: "rv-head" }, el("h3", { text: title }), ...tools), el("div", { class: "rv-plot" }, cv));
  return { root, cv, title: root.querySelector("h3") };
}
