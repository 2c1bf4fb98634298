// Pictures of decoded outputs: a row of d outputs drawn as an image where
// the data have an image shape (data.js: image), else as a profile, a line
// over the d outputs on the outputs' range, so that the view works for
// any data whose outputs are its inputs.
import { viridis } from "../../colormap.js";

const PROFILE = { width: 140, height: 98 }; // a profile's pixels

// paintOutput draws the d values of px from off into cv: grey levels
// (image.lo black … image.hi white), or a profile on range {lo, hi}.
export function paintOutput(cv, px, off, d, image, range) {
  if (!image) { profile(cv, px, off, d, range); return; }
  paint(cv, image, (k) => {
    const g = Math.round(255 * Math.min(1, Math.max(0, (px[off + k] - image.lo) / (image.hi - image.lo))));
    const v = Number.isFinite(g) ? g : 0;
    return [v, v, v];
  });
}

// paintSD draws the predictive sd from the variances vr (from off) on the
// colour map, 0 … sdMax; without an image shape, as a profile of the sd.
export function paintSD(cv, vr, off, d, image, sdMax) {
  if (!image) {
    const sd = Float64Array.from({ length: d }, (_, k) => Math.sqrt(Math.max(0, vr[off + k])));
    profile(cv, sd, 0, d, { lo: 0, hi: sdMax });
    return;
  }
  paint(cv, image, (k) => viridis(Math.sqrt(Math.max(0, vr[off + k])) / sdMax));
}

// aspect is a picture's height over its width.
export const aspect = (image) => (image ? image.height / image.width : PROFILE.height / PROFILE.width);

function paint(cv, { width: w, height: h }, rgb) {
  if (cv.width !== w || cv.height !== h) { cv.width = w; cv.height = h; }
  const c = cv.getContext("2d"), img = c.createImageData(w, h), data = img.data;
  for (let k = 0; k < w * h; k++) {
    const [r, g, b] = rgb(k);
    data[4 * k] = r; data[4 * k + 1] = g; data[4 * k + 2] = b; data[4 * k + 3] = 255;
  }
  c.putImageData(img, 0, 0);
}

function profile(cv, v, off, d, { lo, hi }) {
  const { width: w, height: h } = PROFILE;
  if (cv.width !== w || cv.height !== h) { cv.width = w; cv.height = h; }
  const c = cv.getContext("2d"), span = hi - lo || 1;
  c.fillStyle = "#fff"; c.fillRect(0, 0, w, h);
  c.beginPath();
  for (let k = 0; k < d; k++) c.lineTo(2 + ((w - 4) * k) / Math.max(1, d - 1), h - 2 - ((h - 4) * (v[off + k] - lo)) / span);
  c.strokeStyle = "#1d4ed8"; c.lineWidth = 1.5; c.stroke();
}
