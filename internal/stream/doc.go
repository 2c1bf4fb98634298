// Package stream runs dgpviz's live sessions over websockets: transport
// only — sessions, the protocol, pacing and encoding. The model, its edits
// and its math are the engine's (dgpviz/internal/engine); the figures'
// data are montecarlo's; this package calls them and sends what they
// return.
//
// Goroutines per session (each started and ended by the session):
//
//   - the reader (pump.go), on the HTTP handler's goroutine: text messages
//     become commands for the optimizer, with a read limit and pong
//     deadlines;
//   - the optimizer (session.run), the only user of the session's trainer:
//     it steps while playing (or while a "step" command has iterations
//     left), applies commands between iterations through the command table
//     (commands.go), and hands private snapshots of the model to a
//     one-slot, latest-wins mailbox (mailbox.go);
//   - the writer (pump.go), the only writer to the socket: replies,
//     setups, frames built from the latest snapshot at most 60 times a
//     second, and only once the page has drawn the last one if it says
//     so (drawgate.go), message-figure messages, and pings;
//   - while the message figure is open, its Monte Carlo worker
//     (messagefigure.go, runFigure), which hands encoded messages to the writer
//     through a mailbox of its own;
//   - for robot data, the frame's analysis (geometry scores, test error)
//     runs on a short-lived goroutine of the writer's at most 5 times a
//     second (robot_frame.go).
//
// Per server, the robot view's baselines are fitted once per data set on a
// background goroutine that Shutdown cancels and waits for (robot.go).
// The optimizer never waits for the socket; a slow client gets the latest
// frame, not a backlog. A session's context ends all of its work when its
// socket closes.
//
// The protocol — binary frames with a JSON header and float32 / 16-bit
// quantised sections, JSON commands and replies — is versioned and
// documented in docs/protocol.md.
package stream
