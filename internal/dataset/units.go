package dataset

import (
	"dgpviz/internal/wire"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

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

// MaxUnitBytes bounds a unit's name in a header, as model files bound it.
const MaxUnitBytes = 64

// SplitUnit splits a column's header into its name and its unit: a header
// that ends in a bracketed unit, "y_ap1 [dBm]", is the column y_ap1 in dBm;
// one without, "y_ap1", has no unit (""). The unit is the text between the
// last "[" and the closing "]", trimmed: not empty, at most MaxUnitBytes
// bytes, without brackets or control characters, so that it prints
// wherever a number does.
func SplitUnit(header string) (name, unit string, err error) {
	h := strings.TrimSpace(header)
	if !strings.HasSuffix(h, "]") {
		if strings.ContainsAny(h, "[]") {
			return "", "", fmt.Errorf("header %q: a unit goes in brackets at the end, as in \"y_ap1 [dBm]\"", wire.Truncate(h, 40))
		}
		return h, "", nil
	}
	i := strings.LastIndex(h, "[")
	if i < 0 {
		return "", "", fmt.Errorf("header %q: a unit goes in brackets at the end, as in \"y_ap1 [dBm]\"", wire.Truncate(h, 40))
	}
	name, unit = strings.TrimSpace(h[:i]), strings.TrimSpace(h[i+1:len(h)-1])
	switch {
	case name == "":
		return "", "", fmt.Errorf("header %q: a unit with no column name before it", wire.Truncate(h, 40))
	case unit == "":
		return "", "", fmt.Errorf("header %q: empty brackets where the unit goes", wire.Truncate(h, 40))
	case len(unit) > MaxUnitBytes:
		return "", "", fmt.Errorf("header %q: a unit of %d bytes, more than the limit of %d", wire.Truncate(h, 40), len(unit), MaxUnitBytes)
	case strings.ContainsAny(name, "[]") || strings.ContainsAny(unit, "[]"):
		return "", "", fmt.Errorf("header %q: one bracketed unit at the end, as in \"y_ap1 [dBm]\"", wire.Truncate(h, 40))
	case !utf8.ValidString(unit) || strings.ContainsFunc(unit, unicode.IsControl):
		return "", "", fmt.Errorf("header %q: the unit holds a character that does not print", wire.Truncate(h, 40))
	}
	return name, unit, nil
}

// roleUnit returns the unit that the columns idx of a header share (units
// holds each column's, from SplitUnit), "" when none names one. A data set
// carries one unit for its inputs and one for its outputs, as the model
// normalises and reports them, so columns of one role (kind: "input",
// "output", "ground-truth") must agree.
func roleUnit(header, units []string, idx []int, kind string) (string, error) {
	if len(idx) == 0 {
		return "", nil
	}
	first := idx[0]
	for _, j := range idx[1:] {
		switch {
		case units[j] == units[first]:
		case units[first] == "" || units[j] == "":
			with, without := j, first
			if units[j] == "" {
				with, without = first, j
			}
			return "", fmt.Errorf("%s column %q has the unit [%s] and %q none: give every %s column its unit, or none", kind, header[with], units[with], header[without], kind)
		default:
			return "", fmt.Errorf("%s columns %q [%s] and %q [%s] have different units: the %s columns of a file share one unit", kind, header[first], units[first], header[j], units[j], kind)
		}
	}
	return units[first], nil
}

// dataUnits returns the units of a file's inputs, outputs and ground truth
// (roleUnit of the columns in, out and truth); an autoencoder's inputs are
// its outputs.
func dataUnits(header, units []string, in, out, truth []int, autoencoder bool) ([3]string, error) {
	var u [3]string
	var err error
	if !autoencoder {
		if u[0], err = roleUnit(header, units, in, "input"); err != nil {
			return u, err
		}
	}
	if u[1], err = roleUnit(header, units, out, "output"); err != nil {
		return u, err
	}
	if autoencoder {
		u[0] = u[1]
	}
	u[2], err = roleUnit(header, units, truth, "ground-truth")
	return u, err
}
