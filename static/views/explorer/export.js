// Exports: the latent table as CSV (the server's /figure/latent.csv: every
// layer at the training and held-out rows, with the input, the split, the
// ground truth and the variances: one table for the page and for
// scripts), the latent views and the ground truth as one PNG, and the
// server's own figure (gonum/plot) as SVG, PNG or PDF.

// wireExport wires root's export controls; figureKey() is the session's
// key for figure downloads, canvases() the canvases the PNG puts side by
// side ([first latent, second latent, ground truth], any of them absent).
export function wireExport(root, figureKey, canvases) {
  root.querySelector('[data-testid="explorer-export-csv"]')?.addEventListener("click", () => {
    const key = figureKey();
    if (key) download(`/figure/latent.csv?session=${encodeURIComponent(key)}`, "dgpviz-explorer-latent.csv");
  });
  root.querySelector('[data-testid="explorer-export-png"]')?.addEventListener("click", () => {
    const [a, b, c] = canvases();
    const wl = Math.max(a?.width ?? 0, b?.width ?? 0);
    const out = document.createElement("canvas");
    out.width = wl + (c?.width ?? 0);
    out.height = Math.max((a?.height ?? 0) + (b?.height ?? 0), c?.height ?? 0);
    const ctx = out.getContext("2d");
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, out.width, out.height);
    if (a) ctx.drawImage(a, 0, 0);
    if (b) ctx.drawImage(b, 0, a?.height ?? 0);
    if (c) ctx.drawImage(c, wl, 0);
    out.toBlob((blob) => {
      if (!blob) return;
      const url = URL.createObjectURL(blob);
      download(url, "dgpviz-explorer-latent.png");
      setTimeout(() => URL.revokeObjectURL(url), 1000);
    }, "image/png");
  });
  for (const a of root.querySelectorAll(".explorer-figure-links a")) {
    a.addEventListener("click", (ev) => {
      const key = figureKey();
      if (!key) { ev.preventDefault(); return; }
      a.href = `/figure/latent.${a.dataset.format}?session=${encodeURIComponent(key)}`;
      a.download = `dgpviz-explorer-latent.${a.dataset.format}`;
    });
  }
}

function download(href, name) {
  const a = document.createElement("a");
  a.href = href; a.download = name;
  document.body.append(a); a.click(); a.remove();
}
