// Package wire is the websocket protocol's vocabulary, shared by the
// transport (dgpviz/internal/stream) and the views that fill its messages
// (dgpviz/internal/view/...): the binary message layout with its JSON
// header and float32 / 16-bit quantised sections, the number type that
// encodes non-finite values as null, and the commands a page sends.
//
// Binary messages (frames, setups and the views' own messages) are laid
// out as
//
//	u32 little-endian  header length H
//	H bytes            header: UTF-8 JSON, padded with spaces to a multiple of 4
//	payload            the sections, each starting at a multiple of 4
//
// Arrays in the header are references {"$": k} to sections[k] of the
// header's "sections" table. A section is either
//
//	{"t":"f32","n":N,"o":OFF}                  N float32 (little-endian) at payload offset OFF
//	{"t":"q16","n":N,"o":OFF,"lo":A,"hi":B}    N uint16: v = A + q·(B−A)/65534, q = 65535 means NaN
//
// Row ids (the latent explorer's sample, a brush's answer) are f32
// sections: exact below 2²⁴ rows.
//
// A frame's bound is always on every row. In a stochastic fit (SVI, the
// live server's choice above train.StochasticRows rows) a frame shows the
// model of the fit's best full-data check: "bound_iter" is its iteration,
// behind "iter" between checks, and the optimizer's "stochastic",
// "estimate" (the last step's minibatch estimate of the bound, null after a
// step on every row) and "epochs" (passes over the data) say how far the
// steps have gone since.
//
// docs/protocol.md describes every message.
package wire
