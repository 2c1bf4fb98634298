// Package faces decodes the latent space of an autoencoding deep GP of
// images and draws the paper's Frey faces figure for any images: every
// row's latent position coloured by its place in the data (a frame's in
// the video), with decoded images as tiles at a grid of latent positions
// (Hensman & Lawrence 2014).
package faces
