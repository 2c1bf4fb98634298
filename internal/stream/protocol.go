package stream

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/wire"
)

// MaxCoordinate bounds every coordinate a command may set (inducing inputs
// and output means, in the model's normalised units).
const MaxCoordinate = wire.MaxCoordinate

// ParseCommand decodes one command. Its errors say what was wrong.
func ParseCommand(b []byte) (Command, error) {
	c, err := wire.DecodeCommand(b)
	if err != nil {
		return c, err
	}
	if c.Op == "" {
		return c, fmt.Errorf("missing \"op\" (one of %s)", strings.Join(Ops(), ", "))
	}
	if !knownOp(c.Op) {
		return c, fmt.Errorf("unknown op %q (want one of %s)", wire.Truncate(c.Op, 40), strings.Join(Ops(), ", "))
	}
	for _, v := range [][]float64{c.Z, c.Mu, c.X, c.Y, c.Points} {
		for _, x := range v {
			if math.IsNaN(x) || math.Abs(x) > MaxCoordinate {
				return c, fmt.Errorf("%s: coordinate %v out of range [-%d, %d]", c.Op, x, MaxCoordinate, MaxCoordinate)
			}
		}
	}
	return c, nil
}

// reply is a text message from the server: "hello", "ack" or "error".
type reply struct {
	V       int             `json:"v"`
	Type    string          `json:"type"`
	ID      int64           `json:"id,omitempty"`
	Op      string          `json:"op,omitempty"`
	Message string          `json:"message,omitempty"`
	Error   string          `json:"error,omitempty"`
	Config  *admit.Config   `json:"config,omitempty"`
	Session uint64          `json:"session,omitempty"`
	Limits  *admit.Limits   `json:"limits,omitempty"`
	Sets    []dataset.Entry `json:"datasets,omitempty"`
	Groups  []string        `json:"groups,omitempty"`
	// MaxHistory (hello) is the bound history's bound (train.MaxHistory):
	// the page keeps its chart to it, as the server's history is kept.
	MaxHistory int   `json:"max_history,omitempty"`
	Running    *bool `json:"running,omitempty"`
	// Undo and Redo (ack) count the edits that undo and redo would take
	// back or give again; UndoLabel and RedoLabel name the next ones.
	Undo      *int   `json:"undo,omitempty"`
	Redo      *int   `json:"redo,omitempty"`
	UndoLabel string `json:"undo_label,omitempty"`
	RedoLabel string `json:"redo_label,omitempty"`
	// FigureKey (hello) names the session in figure downloads (messagefigure.go).
	FigureKey string `json:"figure_key,omitempty"`
	// Resume (hello) is the token that resumes this session after a
	// disconnect: reconnect to /ws?resume=TOKEN within the resume grace period.
	Resume string `json:"resume,omitempty"`
	// ShareKey (hello) shares this session read-only: followers open
	// /?follow=KEY (follow.go). Follower (hello) marks a follower's hello.
	ShareKey string `json:"share_key,omitempty"`
	Follower bool   `json:"follower,omitempty"`
	// ShareURL (hello) is the page followers open, when it is not this
	// server's (relays, share.go): links are ShareURL?follow=KEY.
	ShareURL string `json:"share_url,omitempty"`
}

func (r reply) bytes() []byte {
	r.V = ProtocolVersion
	b, err := json.Marshal(r)
	if err != nil { // cannot happen: every field marshals
		b = fmt.Appendf(nil, `{"v":%d,"type":"error","error":"the server could not encode its reply"}`, ProtocolVersion)
	}
	return b
}
