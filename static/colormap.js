// Perceptual colour map (viridis, 16 stops from matplotlib's table), with
// precomputed CSS colours so drawing 400 points costs no string building,
// and a horizontal colour bar.

const V = [
  [68, 1, 84], [72, 26, 108], [71, 47, 125], [65, 68, 135], [57, 86, 140], [49, 104, 142], [42, 120, 142], [35, 136, 142],
  [31, 152, 139], [34, 168, 132], [53, 183, 121], [84, 197, 104], [122, 209, 81], [165, 219, 54], [210, 226, 27], [253, 231, 37],
];

export function viridis(t) {
  t = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (V.length - 1);
  const i = Math.min(V.length - 2, Math.floor(t)), f = t - i;
  return V[i].map((v, k) => Math.round(v + f * (V[i + 1][k] - v)));
}

// paletteRGB(n) returns n colours along the map as [r, g, b] arrays
// (cached); palette(n, alpha) the same colours as CSS strings.
const rgbCache = new Map();
export function paletteRGB(n) {
  let p = rgbCache.get(n);
  if (!p) {
    p = Array.from({ length: n }, (_, i) => viridis(n > 1 ? i / (n - 1) : 0.5));
    rgbCache.set(n, p);
  }
  return p;
}

const cssCache = new Map();
export function palette(n, alpha = 1) {
  const key = `${n}:${alpha}`;
  let p = cssCache.get(key);
  if (!p) {
    p = paletteRGB(n).map((c) => `rgba(${c[0]},${c[1]},${c[2]},${alpha})`);
    cssCache.set(key, p);
  }
  return p;
}

// gradient is the map left→right from x0 to x1, as a canvas fill.
export function gradient(ctx, x0, x1) {
  const g = ctx.createLinearGradient(x0, 0, x1, 0);
  for (let k = 0; k < V.length; k++) g.addColorStop(k / (V.length - 1), `rgb(${V[k].join(",")})`);
  return g;
}

// colorBar draws the map left→right in the box (x, y, w, h) with tick
// labels lo and hi and a title (on a second line when the bar is too
// narrow for the three side by side); large, in type for the back of a
// lecture hall (the title bold).
export function colorBar(ctx, x, y, w, h, lo, hi, title, large = false) {
  ctx.fillStyle = gradient(ctx, x, x + w);
  ctx.fillRect(x, y, w, h);
  ctx.strokeStyle = "rgba(0,0,0,0.25)";
  ctx.strokeRect(x + 0.5, y + 0.5, w - 1, h - 1);
  ctx.fillStyle = large ? "#1f2933" : "#5f6b7a";
  const font = large ? "13px system-ui, sans-serif" : "11px system-ui, sans-serif", gap = large ? 3 : 2;
  ctx.font = font;
  ctx.textBaseline = "top";
  ctx.textAlign = "left"; ctx.fillText(lo, x, y + h + gap);
  ctx.textAlign = "right"; ctx.fillText(hi, x + w, y + h + gap);
  const room = w - 2 * Math.max(ctx.measureText(lo).width, ctx.measureText(hi).width) - 16;
  if (large) ctx.font = `600 ${font}`;
  ctx.textAlign = "center"; ctx.fillText(title, x + w / 2, y + h + gap + (ctx.measureText(title).width > room ? (large ? 15 : 13) : 0));
  if (large) ctx.font = "12px system-ui, sans-serif";
}
