// Package stream runs dgpviz's live sessions: one websocket per browser
// tab, each with its own model and optimizer goroutine (engine.Trainer).
//
// Per connection there are three goroutines: the reader (commands, with a
// read limit and pong deadlines), the optimizer (the only user of the
// trainer; it steps, applies commands between steps and hands private
// snapshots of the model to a one-slot, latest-wins mailbox) and the writer
// (the only writer to the socket: replies, setups, frames built from the
// latest snapshot at most 60 times a second, and pings). The optimizer never
// waits for the socket; a slow client gets the latest frame, not a backlog.
//
// The protocol — binary frames with a JSON header and Float32 / 16-bit
// quantised sections, JSON commands and replies — is versioned and
// documented in docs/protocol.md.
package stream
