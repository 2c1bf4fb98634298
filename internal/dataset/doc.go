// Package dataset provides the regression data sets that dgpviz fits with
// deep Gaussian processes, the loaders for data files, and the column
// normalisation used before fitting.
//
// The data sets are selected by a spec string (see Load):
//
//   - "step": the built-in 30-point noisy step function of Hensman & Lawrence
//     (2014), Nested Variational Compression in Deep Gaussian Processes
//     (see Step);
//   - "robot:PATH": robot WiFi signal strengths with true positions, in the
//     format of uw-floor.txt (Ferris, Fox & Lawrence, IJCAI 2007; see ReadRobot);
//   - "csv:PATH": a CSV file with a header row (see ReadCSV);
//   - "npy:PATH", "npz:PATH": NumPy files, read by the CSV's column
//     conventions (see ReadNPY, ReadNPZ); a path alone is read by its
//     extension (.csv, .npy, .npz);
//   - "frey:PATH": the Frey faces video frames from a MAT-file, autoencoded
//     (X = Y = the pixels; see ReadFrey and ReadMAT).
//
// Walk generates a synthetic robot-like walk of any size, shaped as the
// robot data (WriteWalkCSV, WriteWalkNPY, WriteWalkNPZ).
//
// Every Dataset holds its data in original units. A Normalizer standardises
// columns for fitting and maps predictive means and variances back.
//
// Loaders never panic on malformed input: every problem is reported as an
// error, for people (no package prefix), that names the file, the line and
// the field or column.
// Streams (ReadCSV, ReadRobot, ReadMAT…) are limited to MaxFileSize bytes,
// MaxRows rows and MaxColumns columns unless their options say otherwise;
// files a person names (Load, LoadWith) only by memory and
// LoadOptions.MaxRows. A row limit's message names RowsFlag.
package dataset
