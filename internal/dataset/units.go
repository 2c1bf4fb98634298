package dataset

import "strings"

// Units as people read them beside numbers: every JSON or CSV output of
// dgpviz names the unit of each quantity, in these words.

// LatentUnit is the unit of a hidden layer's outputs, which have none but
// those the fit gave them.
const LatentUnit = "latent"

// UnitName is u, the unit a data set gives a column, or "original units"
// when the data do not name it: the values are as the data hold them.
func UnitName(u string) string {
	if u == "" {
		return "original units"
	}
	return u
}

// SquaredUnit is the unit of a variance of values in unit u (a name from
// UnitName or LatentUnit): "dBm²", "(original units)²", "latent".
func SquaredUnit(u string) string {
	switch {
	case u == LatentUnit:
		return LatentUnit
	case strings.ContainsAny(u, " /·"):
		return "(" + u + ")²"
	}
	return u + "²"
}

// Header is a CSV column's header with its unit: "time [s]".
func Header(name, unit string) string { return name + " [" + unit + "]" }
