// Splat: scatter-plot marks (discs, rings, diamonds, ellipses, lines and
// boxes) rasterised in script into a copy of a canvas's pixels without
// them (an opaque ImageData: the view's static layer, in the page's colour
// with axes and labels), then put back onto the canvas in one image copy
// of the pixels marked now or the last time.
//
// A 2-D context rasterises every arc of a path on its own: a few µs a dot
// where the canvas is not on a GPU (and a sprite copy with drawImage costs
// as much, per call). Thousands of dots a frame, as in the robot view's
// latent projections, cost 10 ms and more that way; here a dot is some
// 50 pixels of arithmetic. A plain copy is also the cheapest way onto the
// canvas: nothing to blend, nothing recorded to replay. Marks are
// antialiased as the canvas's own (coverage from the distance to the
// edge: a mark's ink is within 2% of the exact shape's, TestBrowserSplat
// in web/), blended at opacities in 256ths, drawn in order (later over
// earlier, "source-over"), and a dot's inside is exactly its colour.
//
// Marks drawn through union…() between union(colour, alpha) and
// fillUnion() are painted together, as one path filled (or stroked) once:
// overlapping translucent shapes do not darken. Where they cover a pixel
// fully it is painted at once (a stamp marks it done); their edges gather
// coverage (the largest of the shapes at each pixel) until fillUnion.

export class Splat {
  constructor() { this.W = 0; this.H = 0; this.n = 0; }

  // begin starts marks over base, the pixels of ctx's canvas without
  // them (an ImageData, opaque, so that a mark blends without a division;
  // a new one when it changed): ctx's current transform (a scale and a
  // translation) maps the plot's units to the canvas's pixels. Marks go on
  // a copy of base; where the last marks were, the copy is restored, and
  // end puts both places on the canvas (all of it after a new base), so
  // nothing else may draw there but through touch.
  begin(ctx, base) {
    const W = base.width, H = base.height;
    if (W !== this.W || H !== this.H) {
      this.W = W; this.H = H;
      this.img = new ImageData(W, H);
      this.u = new Uint32Array(this.img.data.buffer);
      // per pixel, a union's coverage (in 256ths) and the union that
      // painted it (cur, 1…255): small, to stay in the caches between frames
      this.cov = new Uint16Array(W * H);
      this.stamp = new Uint8Array(W * H); this.cur = 0;
      this.touched = new Int32Array(4096);
      this.base = null;
    }
    if (base !== this.base) {
      this.base = base; this.bu = new Uint32Array(base.data.buffer);
      this.u.set(this.bu);
      this.put = [0, 0, W, H];
    } else {
      const [x0, y0, x1, y1] = this.put = this.box;
      for (let y = y0; y < y1; y++) this.u.set(this.bu.subarray(y * W + x0, y * W + x1), y * W + x0);
    }
    this.box = [W, H, 0, 0]; // the pixels marked: x0, y0, x1, y1
    const m = ctx.getTransform();
    this.ctx = ctx; this.s = m.a; this.tx = m.e; this.ty = m.f;
    this.cl = 0; this.ct = 0; this.cr = W; this.cb = H; // the clip
    this.n = 0;
  }

  // forget says that the canvas was drawn on otherwise since end(): the
  // next begin puts all of it.
  forget() { this.base = null; }

  // touch counts the box (plot units) as marked: where the caller draws on
  // the canvas itself after end(), to be put over with the next marks.
  touch(l, t, r, b) {
    const s = this.s;
    this.#mark(Math.floor(l * s + this.tx), Math.floor(t * s + this.ty), Math.ceil(r * s + this.tx), Math.ceil(b * s + this.ty));
  }

  // #mark adds the pixels x0 … x1 − 1, y0 … y1 − 1 (within the clip) to
  // those marked.
  #mark(x0, y0, x1, y1) {
    const b = this.box;
    b[0] = Math.min(b[0], Math.max(x0, this.cl)); b[1] = Math.min(b[1], Math.max(y0, this.ct));
    b[2] = Math.max(b[2], Math.min(x1, this.cr)); b[3] = Math.max(b[3], Math.min(y1, this.cb));
  }

  // clip limits the marks to the box (plot units), as ctx.clip() would.
  clip(l, t, r, b) {
    const s = this.s;
    this.cl = Math.max(0, Math.round(l * s + this.tx)); this.cr = Math.min(this.W, Math.round(r * s + this.tx));
    this.ct = Math.max(0, Math.round(t * s + this.ty)); this.cb = Math.min(this.H, Math.round(b * s + this.ty));
  }

  // disc draws a disc of radius r at (x, y) (plot units) in colour
  // c = [r, g, b]; ring draws a circle of radius r stroked lw wide.
  disc(x, y, r, c) { this.#paint(x, y, r, 0, DISC, c, 1); }
  ring(x, y, r, lw, c) { this.#paint(x, y, r, lw, DISC, c, 1); }

  // diamond draws a square on its corner (centre to corner r) filled in
  // colour c at opacity alpha and outlined lw wide in colour edge.
  diamond(x, y, r, c, alpha, lw, edge) {
    this.#paint(x, y, r, 0, DIAMOND, c, alpha);
    this.#paint(x, y, r, lw, DIAMOND, edge, 1);
  }

  // rect fills the box from (l, t) to (r, b) (plot units) in colour c at
  // opacity alpha; the pixels it covers in part get their part.
  rect(l, t, r, b, c, alpha) {
    const s = this.s, x0 = l * s + this.tx, x1 = r * s + this.tx, y0 = t * s + this.ty, y1 = b * s + this.ty, W = this.W, u = this.u;
    const crb = rb(c), cg = gr(c), cpx = pack(c);
    this.#mark(Math.floor(x0), Math.floor(y0), Math.ceil(x1), Math.ceil(y1));
    const xa = Math.max(this.cl, Math.floor(x0)), xb = Math.min(this.cr, Math.ceil(x1));
    const ia = Math.max(xa, Math.ceil(x0)), ib = Math.max(ia, Math.min(xb, Math.floor(x1))); // the columns covered in full
    for (let py = Math.max(this.ct, Math.floor(y0)), ye = Math.min(this.cb, Math.ceil(y1)); py < ye; py++) {
      const a = (Math.min(py + 1, y1) - Math.max(py, y0)) * alpha, row = py * W;
      for (let px = xa; px < ia; px++) over(u, row + px, crb, cg, cpx, (Math.min(px + 1, x1) - Math.max(px, x0)) * a);
      for (let px = ib; px < xb; px++) over(u, row + px, crb, cg, cpx, (Math.min(px + 1, x1) - Math.max(px, x0)) * a);
      const A = q256(a);
      if (A <= 0 || ib <= ia) continue;
      if (A === 256) u.fill(cpx, row + ia, row + ib);
      else for (let p = row + ia, pe = row + ib; p < pe; p++) blend(u, p, crb, cg, A);
    }
  }

  // union starts shapes painted together in colour c at opacity alpha
  // (fillUnion ends them); unionDisc and unionRing are discs and circles
  // as above.
  union(c, alpha) {
    this.urb = rb(c); this.ug = gr(c); this.uA = q256(alpha);
    if (++this.cur > 255) { this.stamp.fill(0); this.cur = 1; }
  }
  unionDisc(x, y, r) { this.#paint(x, y, r, 0, DISC, null, 1); }
  unionRing(x, y, r, lw) { this.#paint(x, y, r, lw, DISC, null, 1); }

  // unionEllipse adds an axis-aligned ellipse: radii rx, ry (plot units);
  // the edge's distance is estimated from the ellipse's implicit function
  // and its gradient.
  unionEllipse(x, y, rx, ry) {
    const s = this.s, cx = x * s + this.tx, cy = y * s + this.ty, a = rx * s, b = ry * s;
    if (!(cx > -1e6 && cx < 1e6 && cy > -1e6 && cy < 1e6 && a > 0 && b > 0)) return;
    const ya = Math.max(this.ct, Math.floor(cy - b - 0.5)), yb = Math.min(this.cb, Math.ceil(cy + b + 0.5));
    const xa0 = Math.max(this.cl, Math.floor(cx - a - 0.5)), xb0 = Math.min(this.cr, Math.ceil(cx + a + 0.5));
    if (yb <= ya || xb0 <= xa0) return;
    this.#mark(xa0, ya, xb0, yb);
    const ia2 = 1 / (a * a), ib2 = 1 / (b * b), ia4 = ia2 * ia2, ib4 = ib2 * ib2, bo2 = (b + 0.5) * (b + 0.5), b2 = b * b;
    const W = this.W, cur = this.cur, stamp = this.stamp, cov = this.cov, u = this.u, crb = this.urb, cg = this.ug, A = this.uA;
    while (this.n + (yb - ya) * (xb0 - xa0) > this.touched.length) this.#grow();
    const t = this.touched;
    let n = this.n;
    for (let py = ya; py < yb; py++) {
      const dy = py + 0.5 - cy, dy2 = dy * dy;
      if (dy2 >= bo2) continue;
      // the row's pixels within half a pixel of the edge, across; the
      // implicit function's gradient where the row meets the edge (the
      // same for the few pixels of the edge on the row): coverage is
      // 0.5 − f/|∇f|
      const wo = (a + 0.5) * Math.sqrt(1 - dy2 / bo2);
      const xa = Math.max(xa0, Math.floor(cx - wo)), xb = Math.min(xb0, Math.ceil(cx + wo));
      const xo2 = dy2 < b2 ? a * a * (1 - dy2 * ib2) : 0, ig = 0.5 / Math.sqrt(xo2 * ia4 + dy2 * ib4), fy = dy2 * ib2 - 1;
      const row = py * W;
      for (let px = xa; px < xb; px++) {
        const p = row + px;
        if (stamp[p] === cur) continue; // painted already
        const dx = px + 0.5 - cx, c = q256(0.5 - (dx * dx * ia2 + fy) * ig);
        if (c >= 256) { // inside: painted at once
          stamp[p] = cur;
          if (cov[p] > 0) cov[p] = 256; else blend(u, p, crb, cg, A);
        } else if (c > 0) { // the edge: the largest coverage, painted by fillUnion
          const k = cov[p];
          if (k === 0) t[n++] = p;
          if (c > k) cov[p] = c;
        }
      }
    }
    this.n = n;
  }

  // line draws the segment from (x0, y0) to (x1, y1) stroked lw wide
  // (plot units) in colour c at opacity alpha, on its own (butt ends).
  // At most a device pixel wide it is a hairline, as the canvas's: one
  // pixel's worth of coverage split between two pixels per step along it
  // (where hairlines cross they darken). unionLine gathers a wider line's
  // coverage instead, as one path (round ends, so the segments of a
  // polyline join without gaps).
  line(x0, y0, x1, y1, lw, c, alpha) {
    if (lw * this.s <= 1) this.#hairline(x0, y0, x1, y1, c, alpha);
    else this.#line(x0, y0, x1, y1, lw, c, alpha);
  }
  unionLine(x0, y0, x1, y1, lw) { this.#line(x0, y0, x1, y1, lw, null, 1); }

  // fillUnion paints the edges of the shapes since union().
  fillUnion() {
    const cov = this.cov, t = this.touched, u = this.u, crb = this.urb, cg = this.ug, A = this.uA;
    for (let k = 0; k < this.n; k++) {
      const p = t[k], a = (cov[p] * A + 128) >> 8;
      if (a > 0) blend(u, p, crb, cg, a);
      cov[p] = 0;
    }
    this.n = 0;
  }

  // end puts the pixels marked now and last time onto the canvas.
  end() {
    if (this.n) this.fillUnion();
    const p = this.put, b = this.box;
    const x0 = Math.min(p[0], b[0]), y0 = Math.min(p[1], b[1]), x1 = Math.max(p[2], b[2]), y1 = Math.max(p[3], b[3]);
    if (x1 > x0 && y1 > y0) this.ctx.putImageData(this.img, 0, 0, x0, y0, x1 - x0, y1 - y0);
  }

  // #hairline steps along the major axis a pixel at a time (the part of
  // each step the segment spans), the coverage split between the two
  // pixels nearest the line across it.
  #hairline(x0, y0, x1, y1, col, alpha) {
    const s = this.s;
    const ax0 = x0 * s + this.tx, ay0 = y0 * s + this.ty, bx0 = x1 * s + this.tx, by0 = y1 * s + this.ty;
    if (!(Math.abs(ax0) < 1e6 && Math.abs(ay0) < 1e6 && Math.abs(bx0) < 1e6 && Math.abs(by0) < 1e6)) return;
    this.#mark(Math.floor(Math.min(ax0, bx0)) - 1, Math.floor(Math.min(ay0, by0)) - 1, Math.ceil(Math.max(ax0, bx0)) + 1, Math.ceil(Math.max(ay0, by0)) + 1);
    // u along the major axis (a pixel a step), v across it; pixel (u, v)
    // is at du·u + dv·v in the buffer
    const W = this.W, steep = Math.abs(by0 - ay0) > Math.abs(bx0 - ax0);
    let ua = steep ? ay0 : ax0, va = steep ? ax0 : ay0, ub = steep ? by0 : bx0, vb = steep ? bx0 : by0;
    if (ua > ub) { let q = ua; ua = ub; ub = q; q = va; va = vb; vb = q; }
    const du = steep ? W : 1, dv = steep ? 1 : W;
    const ulo = steep ? this.ct : this.cl, uhi = steep ? this.cb : this.cr, vlo = steep ? this.cl : this.ct, vhi = steep ? this.cr : this.cb;
    const g = ub > ua ? (vb - va) / (ub - ua) : 0, u = this.u, crb = rb(col), cg = gr(col), px = pack(col);
    for (let p = Math.max(ulo, Math.floor(ua)), pe = Math.min(uhi, Math.ceil(ub)); p < pe; p++) {
      const w = (Math.min(p + 1, ub) - Math.max(p, ua)) * alpha; // the step's part on the segment
      if (w <= 0) continue;
      const vc = va + (Math.min(ub, Math.max(ua, p + 0.5)) - ua) * g - 0.5, q = Math.floor(vc), f = vc - q;
      if (q >= vlo && q < vhi) over(u, p * du + q * dv, crb, cg, px, (1 - f) * w);
      if (q + 1 >= vlo && q + 1 < vhi) over(u, p * du + (q + 1) * dv, crb, cg, px, f * w);
    }
  }

  // #line walks the segment along its major axis, pixel by pixel, and
  // across it the pixels within reach; coverage is from the distance to
  // the segment.
  #line(x0, y0, x1, y1, lw, col, alpha) {
    const s = this.s, ax = x0 * s + this.tx, ay = y0 * s + this.ty, bx = x1 * s + this.tx, by = y1 * s + this.ty;
    if (!(Math.abs(ax) < 1e6 && Math.abs(ay) < 1e6 && Math.abs(bx) < 1e6 && Math.abs(by) < 1e6)) return;
    const h = (lw * s) / 2 + 0.5, dx = bx - ax, dy = by - ay, l2 = dx * dx + dy * dy || 1e-12, len = Math.sqrt(l2);
    this.#mark(Math.floor(Math.min(ax, bx) - h), Math.floor(Math.min(ay, by) - h), Math.ceil(Math.max(ax, bx) + h), Math.ceil(Math.max(ay, by) + h));
    const steep = Math.abs(dy) > Math.abs(dx);
    const [u0, u1, lo, hi] = steep ? [Math.min(ay, by), Math.max(ay, by), this.ct, this.cb] : [Math.min(ax, bx), Math.max(ax, bx), this.cl, this.cr];
    const [vlo, vhi] = steep ? [this.cl, this.cr] : [this.ct, this.cb];
    const slope = steep ? dx / (dy || 1e-12) : dy / (dx || 1e-12), reach = h * Math.sqrt(1 + slope * slope);
    const ua = Math.max(lo, Math.floor(u0 - h)), ub = Math.min(hi, Math.ceil(u1 + h));
    const W = this.W, cov = this.cov, buf = this.u, crb = col ? rb(col) : 0, cg = col ? gr(col) : 0, cpx = col ? pack(col) : 0;
    for (let u = ua; u < ub; u++) {
      const uc = Math.min(u1, Math.max(u0, u + 0.5)); // on the segment's span
      const vc = steep ? ax + (uc - ay) * slope : ay + (uc - ax) * slope;
      const va = Math.max(vlo, Math.floor(vc - reach)), vb = Math.min(vhi, Math.ceil(vc + reach));
      for (let v = va; v < vb; v++) {
        const px = steep ? v + 0.5 : u + 0.5, py = steep ? u + 0.5 : v + 0.5;
        const t = ((px - ax) * dx + (py - ay) * dy) / l2; // along, 0…1 on the segment
        let c;
        if (col) { // butt ends: a polyline's segments abut without overlapping
          c = Math.min(h - Math.abs((px - ax) * dy - (py - ay) * dx) / len, 0.5 + len * Math.min(t, 1 - t));
        } else {
          const tc = Math.min(1, Math.max(0, t)), ex = ax + tc * dx - px, ey = ay + tc * dy - py;
          c = h - Math.sqrt(ex * ex + ey * ey);
        }
        if (c <= 0) continue;
        if (c > 1) c = 1;
        const p = steep ? u * W + v : v * W + u;
        if (col) over(buf, p, crb, cg, cpx, c * alpha); else this.#gather(cov, p, q256(c));
      }
    }
  }

  // #paint draws the shape's mask at (x, y): over the buffer in colour c
  // at opacity alpha, or (c null) into the union's coverage.
  #paint(x, y, r, lw, shape, c, alpha) {
    const s = this.s, cx = x * s + this.tx, cy = y * s + this.ty;
    if (!(cx > -1e6 && cx < 1e6 && cy > -1e6 && cy < 1e6)) return; // NaN or far away
    const ix = Math.floor(cx), iy = Math.floor(cy);
    const m = mask(r * s, lw * s, shape, ((cx - ix) * SUB) | 0, ((cy - iy) * SUB) | 0);
    const xa = ix + m.x0, xb = ix + m.x1, ya = iy + m.y0, yb = iy + m.y1;
    if (xb <= this.cl || xa >= this.cr || yb <= this.ct || ya >= this.cb) return;
    this.#mark(xa, ya, xb, yb);
    const W = this.W, base = iy * W + ix;
    if (m.W !== W) { m.W = W; m.full = m.fx.map((x, j) => m.fy[j] * W + x); m.edge = m.ex.map((x, j) => m.ey[j] * W + x); }
    const full = m.full, edge = m.edge;
    if (xa < this.cl || xb > this.cr || ya < this.ct || yb > this.cb) { // near the clip's edge: pixel by pixel
      for (let j = 0; j < full.length; j++) this.#clipped(ix + m.fx[j], iy + m.fy[j], alpha, c);
      for (let j = 0; j < edge.length; j++) this.#clipped(ix + m.ex[j], iy + m.ey[j], (m.eA[j] / 256) * alpha, c);
      return;
    }
    if (c) paintMask(this.u, m, base, rb(c), gr(c), pack(c), q256(alpha));
    else this.#stampUnion(m, base);
  }

  // #stampUnion adds mask m at buffer offset base to the union: the
  // inside painted at once, the edge gathered (#gather, inlined).
  #stampUnion(m, base) {
    const full = m.full, edge = m.edge, eA = m.eA;
    const u = this.u, cov = this.cov, stamp = this.stamp, cur = this.cur, crb = this.urb, cg = this.ug, A = this.uA;
    for (let j = 0; j < full.length; j++) {
      const p = base + full[j];
      if (stamp[p] === cur) continue;
      stamp[p] = cur;
      if (cov[p] > 0) cov[p] = 256; else blend(u, p, crb, cg, A);
    }
    while (this.n + edge.length > this.touched.length) this.#grow();
    const t = this.touched;
    let n = this.n;
    for (let j = 0; j < edge.length; j++) {
      const p = base + edge[j], a = eA[j];
      if (stamp[p] === cur) continue;
      if (cov[p] === 0) t[n++] = p;
      if (a > cov[p]) cov[p] = a;
    }
    this.n = n;
  }

  #clipped(px, py, a, c) {
    if (px < this.cl || px >= this.cr || py < this.ct || py >= this.cb) return;
    const p = py * this.W + px;
    if (c) over(this.u, p, rb(c), gr(c), pack(c), a); else this.#gather(this.cov, p, q256(a));
  }

  // #gather adds coverage a (in 256ths) of pixel p to the union: full
  // coverage paints it (once), partial coverage waits for fillUnion.
  #gather(cov, p, a) {
    const stamp = this.stamp, cur = this.cur;
    if (stamp[p] === cur) return; // painted, or to be painted in full
    if (a <= 0) return;
    if (a >= 256) {
      stamp[p] = cur;
      if (cov[p] > 0) cov[p] = 256; else blend(this.u, p, this.urb, this.ug, this.uA);
      return;
    }
    if (cov[p] === 0) {
      if (this.n === this.touched.length) this.#grow();
      this.touched[this.n++] = p;
    }
    if (a > cov[p]) cov[p] = a;
  }

  #grow() { const t = new Int32Array(this.touched.length * 2); t.set(this.touched); this.touched = t; }
}

// Masks: a shape's coverage of the pixels about its centre, for a radius
// and ring width (device pixels, in steps of 1/RQ) and the centre's place
// in its pixel (in steps of 1/SUB: off by at most 1/16 pixel). Coverage
// is the distance from a pixel's centre to the edge, clamped to [0, 1]
// (an edge through a pixel's centre covers half of it), as a canvas's
// antialiasing. Shapes: DISC (radius r) and DIAMOND (a square on its
// corner, r from centre to corner; its stroke's corners are mitred).
// Cached by their key, a small integer: radii up to 256 pixels and ring
// widths up to 16 (larger ones are made each time).
const SUB = 8, RQ = 16, MAX_MASKS = 8192, DISC = 0, DIAMOND = 1;
let masks = new Map();
function mask(R, lw, shape, fx, fy) {
  const rq = Math.max(1, Math.round(R * RQ)), wq = Math.round(lw * RQ);
  if (rq >= 4096 || wq >= 256) return makeMask(rq, wq, shape, fx, fy);
  const key = (((shape * 256 + wq) * 4096 + rq) * SUB + fx) * SUB + fy;
  let m = masks.get(key);
  if (m) return m;
  if (masks.size >= MAX_MASKS) masks = new Map();
  m = makeMask(rq, wq, shape, fx, fy);
  masks.set(key, m);
  return m;
}
function makeMask(rq, wq, shape, fx, fy) {
  const r = rq / RQ, h = wq / RQ / 2 + 0.5, cx = (fx + 0.5) / SUB, cy = (fy + 0.5) / SUB;
  const out = Math.ceil((wq > 0 ? r + h : r + 0.5) + 1);
  const fx_ = [], fy_ = [], ex = [], ey = [], ea = [];
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (let y = -out; y <= out; y++) {
    for (let x = -out; x <= out; x++) {
      const dx = x + 0.5 - cx, dy = y + 0.5 - cy;
      const dist = shape === DIAMOND ? (Math.abs(dx) + Math.abs(dy) - r) * Math.SQRT1_2 : Math.hypot(dx, dy) - r; // signed, to the edge
      let c = wq > 0 ? h - Math.abs(dist) : 0.5 - dist;
      if (c <= 0) continue;
      if (c > 1) c = 1;
      if (c === 1) { fx_.push(x); fy_.push(y); } else { ex.push(x); ey.push(y); ea.push(c); }
      x0 = Math.min(x0, x); x1 = Math.max(x1, x + 1); y0 = Math.min(y0, y); y1 = Math.max(y1, y + 1);
    }
  }
  // full: the pixels inside (one store each), edge: the others, blended;
  // their offsets for a buffer W wide are made on first use
  return {
    fx: Int32Array.from(fx_), fy: Int32Array.from(fy_), ex: Int32Array.from(ex), ey: Int32Array.from(ey),
    eA: Int32Array.from(ea, q256), // the edge's coverage in 256ths
    x0, x1, y0, y1, W: 0, full: null, edge: null,
  };
}

// paintMask paints mask m at offset base of u in a colour (its lanes crb, cg
// and its pixel px) at opacity A/256: the inside as the colour itself
// when opaque.
function paintMask(u, m, base, crb, cg, px, A) {
  const full = m.full, edge = m.edge, eA = m.eA;
  if (A >= 256) {
    for (let j = 0; j < full.length; j++) u[base + full[j]] = px;
    for (let j = 0; j < edge.length; j++) blend(u, base + edge[j], crb, cg, eA[j]);
  } else {
    for (let j = 0; j < full.length; j++) blend(u, base + full[j], crb, cg, A);
    for (let j = 0; j < edge.length; j++) blend(u, base + edge[j], crb, cg, (eA[j] * A + 128) >> 8);
  }
}

// q256 is an opacity or coverage (0…1) in 256ths, rounded; at most 256.
const q256 = (a) => Math.min(256, (a * 256 + 0.5) | 0);

// Colours: c = [r, g, b] packed as the opaque pixel (pack) and as its red
// and blue (rb) and green (gr) lanes, blended two lanes at once.
const pack = (c) => (0xff000000 | (c[2] << 16) | (c[1] << 8) | c[0]) >>> 0;
const rb = (c) => c[0] | (c[2] << 16), gr = (c) => c[1] << 8;

// over composites a colour (its lanes crb, cg and its pixel px) at
// opacity a (0…1) over the opaque pixel p of u (the RGBA bytes read as one
// little-endian word, as on every machine a browser runs on); blend at
// opacity A/256 (A an integer, 0…256), rounded: red and blue as one
// 32-bit product (each lane's sum stays below 2^16), green as another.
function over(u, p, crb, cg, px, a) {
  const A = q256(a);
  if (A <= 0) return;
  if (A >= 256) { u[p] = px; return; }
  blend(u, p, crb, cg, A);
}
function blend(u, p, crb, cg, A) {
  const x = u[p], B = 256 - A;
  u[p] = 0xff000000 | (((Math.imul(x & 0xff00ff, B) + Math.imul(crb, A) + 0x800080) >>> 8) & 0xff00ff) |
    (((Math.imul(x & 0xff00, B) + Math.imul(cg, A) + 0x8000) >>> 8) & 0xff00);
}
