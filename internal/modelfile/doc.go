// Package modelfile reads and writes dgpviz's model files: a deep GP of
// package engine with the data it was fitted to, how those data were
// normalised, and what is known of them beyond the numbers (units, an
// image shape). The format is JSON, documented field by field in
// docs/model-format.md.
//
// ReadWith reads a file as a stream and checks every limit (rows,
// columns, layers, widths, inducing points, memory) before it allocates
// what the limit guards, so that a hostile file costs little more than
// its own size. Write writes a model deterministically; arrays of more
// than a thousand values are compact (little-endian binary, zlib,
// base64), data in their original units are stored as integers when
// that re-normalises bit for bit, and the data of a public data set are
// referred to by the file's sha256 instead of being copied.
//
// The package is apart from the engine so that the engine's numerical
// code imports nothing of the project but linalg: a file, a data set or a
// checksum is this package's business.
package modelfile
