// Package dataset provides the regression data sets that dgpviz fits with
// deep Gaussian processes, the loaders for data files, and the column
// normalisation used before fitting.
//
// Four kinds of data set are available, selected by a spec string (see Load):
//
//   - "step": the built-in 30-point noisy step function of Hensman & Lawrence
//     (2014), Nested Variational Compression in Deep Gaussian Processes
//     (see Step);
//   - "robot:PATH": robot WiFi signal strengths with true positions, in the
//     format of uw-floor.txt (Ferris, Fox & Lawrence, IJCAI 2007; see ReadRobot);
//   - "csv:PATH": a CSV file with a header row (see ReadCSV);
//   - "frey:PATH": the Frey faces video frames from a MAT-file, autoencoded
//     (X = Y = the pixels; see ReadFrey and ReadMAT).
//
// Every Dataset holds its data in original units. A Normalizer standardises
// columns for fitting and maps predictive means and variances back.
//
// Loaders never panic on malformed input: every problem is reported as an
// error, for people (no package prefix), that names the file, the line and
// the field or column.
// Inputs are limited to MaxFileSize bytes, MaxRows rows and MaxColumns
// columns; a command line may raise the CSV reader's rows and bytes with
// its own flag (CSVOptions.RaiseLimits, LoadWith).
package dataset
