// Decoded outputs beside the map: the one under the cursor with its
// predictive sd, and the hovered row (a frame of the video) beside the
// model's reconstruction of it. Each is asked for again when the cursor
// or the hover moves or the model changes.
import { fmt } from "../../plot.js";
import { paintOutput, paintSD } from "./picture.js";

// The sd picture's top colour is this share of the outputs' range: 40 of
// the 255 grey levels of images.
const SD_SHARE = 40 / 255;

// createFaces fills the elements q(testid) finds, for data (data.js).
export function createFaces(q, data) {
  // what is shown: face, the cursor position decoded (as asked: the answer's
  // points are float32, never equal to the position asked for) and the
  // iteration; frame and frameIter, the row.
  let asked = null, face = null, frame = -1, frameIter = -1;
  const unit = data.unit === "grey level" ? "grey levels" : data.unit || "original units";
  const r = data.image && data.image.hi > data.image.lo ? data.image : data.outputRange;
  const sdMax = SD_SHARE * (r.hi - r.lo || 1);
  q("autoencoder-sd-scale").textContent = `sd: 0 (dark) → ${fmt(sdMax)} ${unit} (yellow)`;
  return {
    // wantCursor returns the request for the output at the cursor {x, y}
    // at iteration iter, or null when it is shown.
    wantCursor(cursor, iter) {
      if (!cursor || (face && face.x === cursor.x && face.y === cursor.y && face.iter === iter)) return null;
      asked = cursor;
      return { points: [cursor.x, cursor.y] };
    },
    // wantFrame returns the request for row i (−1: none), or null.
    wantFrame(i, iter) { return i >= 0 && (frame !== i || frameIter !== iter) ? { frames: [i] } : null; },
    answer(kind, m) {
      const d = m.d;
      if (kind === "cursor" && m.g === 1) {
        paintOutput(q("autoencoder-cursor-mean"), m.mean, 0, d, data.image, data.outputRange);
        paintSD(q("autoencoder-cursor-var"), m.var, 0, d, data.image, sdMax);
        let s = 0;
        for (let k = 0; k < d; k++) s += Math.sqrt(Math.max(0, m.var[k]));
        face = { x: asked?.x, y: asked?.y, iter: m.iter };
        const at = q("autoencoder-cursor-at");
        at.textContent = `latent (${fmt(m.points[0])}, ${fmt(m.points[1])}) · mean sd ${fmt(s / d)} ${unit}`;
        at.dataset.iter = String(m.iter);
        q("autoencoder-cursor-mean").dataset.at = `${m.points[0]},${m.points[1]}`;
      } else if (kind === "frame" && m.frames.length === 1) {
        const i = m.frames[0];
        paintOutput(q("autoencoder-frame-orig"), m.original, 0, d, data.image, data.outputRange);
        paintOutput(q("autoencoder-frame-recon"), m.recon_mean, 0, d, data.image, data.outputRange);
        let e = 0;
        for (let k = 0; k < d; k++) e += (m.recon_mean[k] - m.original[k]) ** 2;
        frame = i; frameIter = m.iter;
        q("autoencoder-frame-title").textContent = `${data.row.one[0].toUpperCase()}${data.row.one.slice(1)} ${i + 1} of ${data.n}`;
        q("autoencoder-frame-at").textContent = `reconstruction error ${fmt(Math.sqrt(e / d))} ${unit} RMS`;
        q("autoencoder-frame-orig").dataset.frame = String(i);
      }
    },
    forget() { face = null; frame = -1; frameIter = -1; },
  };
}
