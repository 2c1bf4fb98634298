package train

import (
	"dgpviz/internal/engine"
	"dgpviz/internal/wire"
	"fmt"
	"strconv"
	"strings"
)

// ParseHidden parses hidden-layer widths written as people write them,
// "1,1" (a 3-layer deep GP) or "" (no hidden layer: a one-layer GP): the
// one parser of the command line's -hidden and the page's URL. Widths must
// be positive integers and there may be at most engine.MaxLayers−1 of them; the
// server's own limits are checked where they apply.
func ParseHidden(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	out := []int{}
	if s == "" {
		return out, nil
	}
	for _, f := range strings.Split(s, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || w < 1 {
			return nil, fmt.Errorf("hidden widths %q: %q is not a positive integer (write them like 1,1)", wire.Truncate(s, 40), wire.Truncate(f, 20))
		}
		if len(out) == engine.MaxLayers-1 {
			return nil, fmt.Errorf("hidden widths %q: more than %d hidden layers", wire.Truncate(s, 40), engine.MaxLayers-1)
		}
		out = append(out, w)
	}
	return out, nil
}
