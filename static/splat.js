// Splat: scatter-plot marks (discs and rings) rasterised in script into a
// canvas-sized RGBA buffer, then put onto the canvas in one image copy.
//
// A 2-D context rasterises every arc of a path on its own: a few µs a dot
// where the canvas is not on a GPU (and a sprite copy with drawImage costs
// as much, per call). Thousands of dots a frame, as in the robot view's
// latent projections, cost 10 ms and more that way; here a dot is some
// 50 pixels of arithmetic. Marks are antialiased as the canvas's own
// (coverage from the distance to the edge), drawn in order (later over
// earlier, "source-over"), and a dot's inside is exactly its colour.
//
// Marks drawn through union…() gather coverage (the largest of the shapes
// at each pixel) until fillUnion(colour, alpha) paints them together, as
// one path filled once: overlapping translucent shapes do not darken.

export class Splat {
  constructor() { this.W = 0; this.H = 0; this.n = 0; }

  // begin starts marks over ctx: its current transform (a scale and a
  // translation) maps the plot's units to the canvas's pixels.
  begin(ctx) {
    const W = ctx.canvas.width, H = ctx.canvas.height;
    if (W !== this.W || H !== this.H) {
      this.W = W; this.H = H;
      this.img = new ImageData(W, H);
      this.d = this.img.data;
      this.u = new Uint32Array(this.d.buffer);
      this.cov = new Float32Array(W * H);
      this.touched = new Int32Array(4096);
    }
    const m = ctx.getTransform();
    this.ctx = ctx; this.m = m; this.s = m.a; this.tx = m.e; this.ty = m.f;
    this.x0 = W; this.y0 = H; this.x1 = 0; this.y1 = 0; // the pixels drawn on under this clip
    (this.rects ??= []).length = 0; // … and under the clips before
    this.cl = 0; this.ct = 0; this.cr = W; this.cb = H; // the clip
    this.n = 0;
  }

  // clip limits the marks to the box (plot units), as ctx.clip() would.
  clip(l, t, r, b) {
    this.#close();
    const s = this.s;
    this.cl = Math.max(0, Math.round(l * s + this.tx)); this.cr = Math.min(this.W, Math.round(r * s + this.tx));
    this.ct = Math.max(0, Math.round(t * s + this.ty)); this.cb = Math.min(this.H, Math.round(b * s + this.ty));
  }

  // disc draws a disc of radius r at (x, y) (plot units) in colour
  // c = [r, g, b]; ring draws a circle of radius r stroked lw wide.
  disc(x, y, r, c) { this.#paint(x, y, r, 0, c); }
  ring(x, y, r, lw, c) { this.#paint(x, y, r, lw, c); }

  // unionDisc and unionRing gather coverage (the largest of the shapes at
  // each pixel) for fillUnion.
  unionDisc(x, y, r) { this.#paint(x, y, r, 0, null); }
  unionRing(x, y, r, lw) { this.#paint(x, y, r, lw, null); }

  // unionEllipse gathers an axis-aligned ellipse's coverage: radii rx, ry
  // (plot units); the edge's distance is estimated from the ellipse's
  // implicit function and its gradient.
  unionEllipse(x, y, rx, ry) {
    const s = this.s, cx = x * s + this.tx, cy = y * s + this.ty, a = rx * s, b = ry * s;
    if (!(cx > -1e6 && cx < 1e6 && cy > -1e6 && cy < 1e6 && a > 0 && b > 0)) return;
    const ya = Math.max(this.ct, Math.floor(cy - b - 0.5)), yb = Math.min(this.cb, Math.ceil(cy + b + 0.5));
    const xa0 = Math.max(this.cl, Math.floor(cx - a - 0.5)), xb0 = Math.min(this.cr, Math.ceil(cx + a + 0.5));
    if (yb <= ya || xb0 <= xa0) return;
    this.x0 = Math.min(this.x0, xa0); this.x1 = Math.max(this.x1, xb0);
    this.y0 = Math.min(this.y0, ya); this.y1 = Math.max(this.y1, yb);
    const W = this.W, cov = this.cov, ia2 = 1 / (a * a), ib2 = 1 / (b * b), ia4 = ia2 * ia2, ib4 = ib2 * ib2;
    const bo = b + 0.5, bi = b - 0.5, ai = a - 0.5;
    for (let py = ya; py < yb; py++) {
      const dy = py + 0.5 - cy, dy2 = dy * dy;
      if (dy2 >= bo * bo) continue;
      const wo = (a + 0.5) * Math.sqrt(1 - dy2 / (bo * bo));
      const wi = ai > 0 && bi > 0 && dy2 < bi * bi ? ai * Math.sqrt(1 - dy2 / (bi * bi)) : -1;
      const xa = Math.max(xa0, Math.floor(cx - wo)), xb = Math.min(xb0, Math.ceil(cx + wo));
      const row = py * W;
      for (let px = xa; px < xb; px++) {
        const dx = px + 0.5 - cx;
        let c;
        if (Math.abs(dx) <= wi) c = 1;
        else {
          const f = dx * dx * ia2 + dy2 * ib2 - 1, g = 2 * Math.sqrt(dx * dx * ia4 + dy2 * ib4);
          c = 0.5 - f / g;
          if (c <= 0) continue;
          if (c > 1) c = 1;
        }
        this.#gather(cov, row + px, c);
      }
    }
  }

  // fillUnion paints the union…() shapes since the last fillUnion in
  // colour c with opacity alpha.
  fillUnion(c, alpha) {
    const cov = this.cov, t = this.touched, d = this.d;
    for (let k = 0; k < this.n; k++) {
      const p = t[k];
      over(d, p * 4, c, cov[p] * alpha);
      cov[p] = 0;
    }
    this.n = 0;
  }

  // end puts the marks onto the canvas (one image copy of the pixels they
  // touched) and clears the buffer for the next marks.
  end() {
    if (this.n) this.fillUnion([0, 0, 0], 0);
    this.#close();
    const rs = this.rects;
    if (!rs.length) return;
    let X0 = this.W, Y0 = this.H, X1 = 0, Y1 = 0;
    for (const r of rs) { X0 = Math.min(X0, r[0]); Y0 = Math.min(Y0, r[1]); X1 = Math.max(X1, r[2]); Y1 = Math.max(Y1, r[3]); }
    const w = X1 - X0, h = Y1 - Y0, ctx = this.ctx;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    if (typeof OffscreenCanvas !== "undefined") {
      // an image of the touched pixels, handed over without a copy
      const oc = (this.oc ??= new OffscreenCanvas(w, h));
      if (oc.width < w || oc.height < h) { oc.width = Math.max(w, oc.width); oc.height = Math.max(h, oc.height); this.occ = null; }
      const occ = (this.occ ??= oc.getContext("2d"));
      for (const [x0, y0, x1, y1] of rs) occ.putImageData(this.img, -X0, -Y0, x0, y0, x1 - x0, y1 - y0);
      const bm = oc.transferToImageBitmap();
      for (const [x0, y0, x1, y1] of rs) ctx.drawImage(bm, x0 - X0, y0 - Y0, x1 - x0, y1 - y0, x0, y0, x1 - x0, y1 - y0);
      bm.close();
    } else {
      const off = (this.off ??= document.createElement("canvas"));
      if (off.width !== this.W || off.height !== this.H) { off.width = this.W; off.height = this.H; }
      const octx = off.getContext("2d");
      for (const [x0, y0, x1, y1] of rs) {
        octx.putImageData(this.img, 0, 0, x0, y0, x1 - x0, y1 - y0);
        ctx.drawImage(off, x0, y0, x1 - x0, y1 - y0, x0, y0, x1 - x0, y1 - y0);
      }
    }
    ctx.setTransform(this.m);
    const u = this.u, W = this.W;
    for (const [x0, y0, x1, y1] of rs) for (let y = y0; y < y1; y++) u.fill(0, y * W + x0, y * W + x1);
    rs.length = 0;
  }

  // #close ends the pixels touched under one clip (a rectangle to copy).
  #close() {
    if (this.x1 > this.x0 && this.y1 > this.y0) this.rects.push([this.x0, this.y0, this.x1, this.y1]);
    this.x0 = this.W; this.y0 = this.H; this.x1 = 0; this.y1 = 0;
  }


  // #paint draws the shape's mask at (x, y): over the buffer in colour c,
  // or (c null) into the union's coverage.
  #paint(x, y, r, lw, c) {
    const s = this.s, cx = x * s + this.tx, cy = y * s + this.ty;
    if (!(cx > -1e6 && cx < 1e6 && cy > -1e6 && cy < 1e6)) return; // NaN or far away
    const ix = Math.floor(cx), iy = Math.floor(cy);
    const m = mask(r * s, lw * s, ((cx - ix) * SUB) | 0, ((cy - iy) * SUB) | 0);
    const xa = ix + m.x0, xb = ix + m.x1, ya = iy + m.y0, yb = iy + m.y1;
    if (xb <= this.cl || xa >= this.cr || yb <= this.ct || ya >= this.cb) return;
    const inside = xa >= this.cl && xb <= this.cr && ya >= this.ct && yb <= this.cb;
    if (inside) {
      if (xa < this.x0) this.x0 = xa;
      if (xb > this.x1) this.x1 = xb;
      if (ya < this.y0) this.y0 = ya;
      if (yb > this.y1) this.y1 = yb;
    } else {
      this.x0 = Math.min(this.x0, Math.max(xa, this.cl)); this.x1 = Math.max(this.x1, Math.min(xb, this.cr));
      this.y0 = Math.min(this.y0, Math.max(ya, this.ct)); this.y1 = Math.max(this.y1, Math.min(yb, this.cb));
    }
    const W = this.W, base = iy * W + ix;
    if (m.W !== W) { m.W = W; m.full = m.fx.map((x, j) => m.fy[j] * W + x); m.edge = m.ex.map((x, j) => m.ey[j] * W + x); }
    const full = m.full, edge = m.edge, ea = m.ea;
    if (!inside) { // near the clip's edge: pixel by pixel
      for (let j = 0; j < full.length; j++) this.#clipped(ix + m.fx[j], iy + m.fy[j], 1, c);
      for (let j = 0; j < edge.length; j++) this.#clipped(ix + m.ex[j], iy + m.ey[j], ea[j], c);
      return;
    }
    if (c) {
      const d = this.d, u = this.u, packed = ((255 << 24) | (c[2] << 16) | (c[1] << 8) | c[0]) >>> 0;
      for (let j = 0; j < full.length; j++) u[base + full[j]] = packed;
      for (let j = 0; j < edge.length; j++) over(d, (base + edge[j]) * 4, c, ea[j]);
      return;
    }
    const cov = this.cov;
    for (let j = 0; j < full.length; j++) this.#gather(cov, base + full[j], 1);
    for (let j = 0; j < edge.length; j++) this.#gather(cov, base + edge[j], ea[j]);
  }

  #clipped(px, py, a, c) {
    if (px < this.cl || px >= this.cr || py < this.ct || py >= this.cb) return;
    const p = py * this.W + px;
    if (c) over(this.d, p * 4, c, a); else this.#gather(this.cov, p, a);
  }

  #gather(cov, p, a) {
    if (cov[p] === 0) {
      if (this.n === this.touched.length) { const t = new Int32Array(this.n * 2); t.set(this.touched); this.touched = t; }
      this.touched[this.n++] = p;
    }
    if (a > cov[p]) cov[p] = a;
  }
}

// Masks: a shape's coverage of the pixels about its centre, for a radius
// and ring width (device pixels, in steps of 1/RQ) and the centre's place
// in its pixel (in steps of 1/SUB: off by at most 1/16 pixel). Coverage
// is the distance from a pixel's centre to the edge, clamped to [0, 1]
// (an edge through a pixel's centre covers half of it), as a canvas's
// antialiasing.
const SUB = 8, RQ = 8, MAX_MASKS = 8192;
let masks = new Map();
function mask(R, lw, fx, fy) {
  const rq = Math.max(1, Math.round(R * RQ)), wq = Math.round(lw * RQ);
  const key = ((wq * 4096 + rq) * SUB + fx) * SUB + fy;
  let m = masks.get(key);
  if (m) return m;
  if (masks.size >= MAX_MASKS) masks = new Map();
  const r = rq / RQ, h = wq / RQ / 2 + 0.5, cx = (fx + 0.5) / SUB, cy = (fy + 0.5) / SUB;
  const out = Math.ceil((wq > 0 ? r + h : r + 0.5) + 1);
  const fx_ = [], fy_ = [], ex = [], ey = [], ea = [];
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (let y = -out; y <= out; y++) {
    for (let x = -out; x <= out; x++) {
      const dist = Math.hypot(x + 0.5 - cx, y + 0.5 - cy);
      let c = wq > 0 ? h - Math.abs(dist - r) : r + 0.5 - dist;
      if (c <= 0) continue;
      if (c > 1) c = 1;
      if (c === 1) { fx_.push(x); fy_.push(y); } else { ex.push(x); ey.push(y); ea.push(c); }
      x0 = Math.min(x0, x); x1 = Math.max(x1, x + 1); y0 = Math.min(y0, y); y1 = Math.max(y1, y + 1);
    }
  }
  // full: the pixels inside (one store each), edge: the others, blended;
  // their offsets for a buffer W wide are made on first use
  m = { fx: Int32Array.from(fx_), fy: Int32Array.from(fy_), ex: Int32Array.from(ex), ey: Int32Array.from(ey), ea: Float32Array.from(ea), x0, x1, y0, y1, W: 0, full: null, edge: null };
  masks.set(key, m);
  return m;
}

// over composites colour c at opacity a (0…1) over the unpremultiplied
// pixel at byte offset q of d.
function over(d, q, c, a) {
  if (a >= 1) { d[q] = c[0]; d[q + 1] = c[1]; d[q + 2] = c[2]; d[q + 3] = 255; return; }
  if (a <= 0) return;
  const d3 = d[q + 3];
  if (d3 === 255) { // over an opaque pixel (as a ring over a dot): no division
    d[q] += (c[0] - d[q]) * a; d[q + 1] += (c[1] - d[q + 1]) * a; d[q + 2] += (c[2] - d[q + 2]) * a;
    return;
  }
  const da = d3 / 255;
  if (da === 0) { d[q] = c[0]; d[q + 1] = c[1]; d[q + 2] = c[2]; d[q + 3] = a * 255 + 0.5; return; }
  const k = da * (1 - a), oa = a + k;
  d[q] = (c[0] * a + d[q] * k) / oa;
  d[q + 1] = (c[1] * a + d[q + 1] * k) / oa;
  d[q + 2] = (c[2] * a + d[q + 2] * k) / oa;
  d[q + 3] = oa * 255 + 0.5;
}
