package wire

import "time"

// MaxCoordinate bounds every coordinate a command may set (inducing inputs
// and output means, in the model's normalised units).
const MaxCoordinate = 1000

// Command is a message from the page (a JSON text message). Op selects the
// command; the other fields are its arguments, absent when not used. ID, if
// given, is echoed in the reply and in the "applied" field of later frames.
// The transport parses commands (stream.ParseCommand); a view's own ops
// read the fields they take.
type Command struct {
	ID           int64         `json:"id"`
	Op           string        `json:"op"`
	N            *int          `json:"n,omitempty"`             // step; compare
	Seed         *uint64       `json:"seed,omitempty"`          // reset
	Method       *string       `json:"method,omitempty"`        // optimizer
	LearningRate *float64      `json:"learning_rate,omitempty"` // optimizer
	Group        *string       `json:"group,omitempty"`         // freeze
	Frozen       *bool         `json:"frozen,omitempty"`        // freeze
	Layer        *int          `json:"layer,omitempty"`         // move, add, remove; message_figure; brush
	Index        *int          `json:"index,omitempty"`         // move, remove; move_data, remove_data; points
	Z            []float64     `json:"z,omitempty"`             // move, add
	Mu           []float64     `json:"mu,omitempty"`            // move (pull), add
	KeepU        *bool         `json:"keep_u,omitempty"`        // move: keep q(u) instead of projecting it
	X            []float64     `json:"x,omitempty"`             // add_data, move_data
	Y            []float64     `json:"y,omitempty"`             // add_data, move_data
	Hidden       []int         `json:"hidden,omitempty"`        // architecture
	Inducing     *int          `json:"inducing,omitempty"`      // architecture
	Dataset      *string       `json:"dataset,omitempty"`       // dataset
	Restart      *int          `json:"restart,omitempty"`       // restart
	Speed        *int          `json:"speed,omitempty"`         // speed
	WatchRepair  *bool         `json:"watch_repair,omitempty"`  // speed: an edit's repair at the speed
	Inputs       []FigureInput `json:"inputs,omitempty"`        // message_figure
	Samples      *int          `json:"samples,omitempty"`       // message_figure, fit_density
	Name         *string       `json:"name,omitempty"`          // message_figure_preset
	Points       []float64     `json:"points,omitempty"`        // decode, brush
	Dims         []int         `json:"dims,omitempty"`          // brush
	Colour       *string       `json:"colour,omitempty"`        // points
	Frames       []int         `json:"frames,omitempty"`        // decode
	Seq          *uint64       `json:"seq,omitempty"`           // drawn
	Present      *bool         `json:"present,omitempty"`       // present
	Scale        *float64      `json:"scale,omitempty"`         // present
	Slide        *string       `json:"slide,omitempty"`         // present

	// Received is when the transport's reader took the command (the load
	// watch measures how long commands wait); not part of the JSON.
	Received time.Time `json:"-"`
}

// FigureInput is one Gaussian input N(mean, var) of the message figure, in
// the layer's input units (normalised for the first layer).
type FigureInput struct {
	Mean float64 `json:"mean"`
	Var  float64 `json:"var"`
}
