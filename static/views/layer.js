// A view's static layer: what it draws only now and then (axes, labels,
// colour bars, and for views that change only with the analysis all but
// their highlights), kept as an offscreen canvas. It is painted again when
// its key or the canvas's size changes, and copied onto the view's canvas
// with one drawImage at the start of every draw; the marks go over it. It
// is opaque, in the page's card colour, so the copy replaces every pixel.
// A transparent layer keeps marks that change more seldom than the others
// on the canvas (the latent views' held-out scans, placed by the
// analysis), copied over them in their turn.
import { canvasSize, getDrawScale } from "../plot.js";

const paints = {}; // paints by layer name, for tests (layerPaints)
export const layerPaints = () => ({ ...paints });

export class StaticLayer {
  // name: for layerPaints; opaque false: a layer of marks that change
  // seldom, drawn over what is on the canvas (transparent elsewhere).
  constructor(name, { opaque = true } = {}) {
    this.name = name;
    this.opaque = opaque;
    this.key = null;
    this.cv = document.createElement("canvas");
  }

  // draw copies the layer onto plot's canvas (Plot.begin done), painting
  // it first with paint(ctx) when key or the plot's size (in pixels or in
  // drawing units: the presentation scale) changed: paint draws through
  // plot as usual, whose context is the layer's meanwhile.
  draw(plot, key, paint) {
    const main = plot.ctx, W = plot.canvas.width, H = plot.canvas.height, off = this.cv;
    key = `${key}@${plot.w}x${plot.h}`;
    if (this.key !== key || off.width !== W || off.height !== H) {
      if (off.width !== W || off.height !== H) { off.width = W; off.height = H; }
      const octx = off.getContext("2d");
      octx.setTransform(1, 0, 0, 1, 0, 0);
      if (this.opaque) {
        octx.fillStyle = getComputedStyle(plot.canvas).getPropertyValue("--card").trim() || "#fff";
        octx.fillRect(0, 0, W, H);
      } else octx.clearRect(0, 0, W, H);
      octx.setTransform(main.getTransform());
      octx.font = main.font;
      plot.ctx = octx;
      // What the paint records (Plot.text, Plot.mark) is the layer's: it
      // is recorded again at each copy, as if drawn then (the tests read
      // a canvas's labels after any draw).
      const d = plot.canvas.drawn, nl = d?.labels.length ?? 0, nm = d?.marks.length ?? 0;
      try { paint(octx); } finally { plot.ctx = main; }
      this.drawn = d ? { labels: d.labels.slice(nl), marks: d.marks.slice(nm) } : null;
      this.key = key;
      paints[this.name] = (paints[this.name] ?? 0) + 1;
    } else if (this.drawn && plot.canvas.drawn) {
      plot.canvas.drawn.labels.push(...this.drawn.labels);
      plot.canvas.drawn.marks.push(...this.drawn.marks);
    }
    main.save();
    main.setTransform(1, 0, 0, 1, 0, 0);
    main.drawImage(off, 0, 0);
    main.restore();
  }
}

// sizeKey says when a canvas must be drawn again for its size alone (CSS
// size, device pixels and the presentation scale).
export function sizeKey(cv) {
  const r = canvasSize(cv);
  return `${r.width}x${r.height}@${window.devicePixelRatio || 1}x${getDrawScale()}`;
}
