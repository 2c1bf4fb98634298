// The density of every row behind a sample (docs/protocol.md, "Large
// data"): each frame of data with more rows than it carries brings, now
// and then, a g × g count of all rows' means per pair of a hidden layer's
// dimensions. It is drawn as an image under the sample's points, stretched
// over its grid's range, with a shade that grows with the logarithm of the
// count: a cell of one row shows, and a cell of ten thousand does not hide
// the rest.

const images = new WeakMap(); // a pair's counts → its image

// image is the pair's counts as a canvas, row 0 (the low end of b) on top:
// drawDensity draws it flipped.
function image(p) {
  let cv = images.get(p.counts);
  if (cv) return cv;
  const g = p.g, c = p.counts;
  let max = 0;
  for (let k = 0; k < c.length; k++) if (c[k] > max) max = c[k];
  cv = document.createElement("canvas");
  cv.width = cv.height = g;
  const ctx = cv.getContext("2d"), img = ctx.createImageData(g, g), px = img.data, lm = Math.log1p(max || 1);
  for (let k = 0; k < c.length; k++) {
    if (!c[k]) continue;
    const v = Math.log1p(c[k]) / lm; // 0…1
    px[4 * k] = 29; px[4 * k + 1] = 78; px[4 * k + 2] = 216; // a blue that no colour bar uses
    px[4 * k + 3] = Math.round(70 + 150 * v); // a lone row's cell shows from the back of a hall
  }
  ctx.putImageData(img, 0, 0);
  images.set(p.counts, cv);
  return cv;
}

// drawDensity draws the pair's density (p: {a, b, g, lo, hi, counts}) on
// the plot scale s, clipped to s.box by the caller.
export function drawDensity(ctx, s, p) {
  const x0 = s.sx(p.lo[0]), x1 = s.sx(p.hi[0]), y0 = s.sy(p.lo[1]), y1 = s.sy(p.hi[1]);
  ctx.save();
  ctx.imageSmoothingEnabled = false; // cells, not a blur that hides their size
  ctx.translate(x0, y0);
  ctx.scale(1, -1); // the image's first row at the low end of b
  ctx.drawImage(image(p), 0, 0, x1 - x0, y0 - y1);
  ctx.restore();
}

// densityPair finds the density of dimensions a, b in a layer's densities.
export function densityPair(layer, a, b) {
  return layer?.pairs.find((p) => p.a === a && p.b === b) ?? null;
}
