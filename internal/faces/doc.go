// Package faces decodes the latent space of an autoencoding deep GP into
// images and draws the paper's Frey faces figure: every frame's latent
// position coloured by its place in the video, with decoded faces as image
// tiles at a grid of latent positions (Hensman & Lawrence 2014).
package faces
