// Package stream runs dgpviz's live sessions over websockets: transport
// only — sessions, the protocol's commands and replies, pacing, applying
// edits and undo (what an undo state holds, its bounds and the
// inducing-point edits' checks are view's: view.EditHistory,
// view.CheckPoint, view.MovePoint). The model and its math are the engine's (dgpviz/internal/engine),
// the optimizer is train's; what a frame shows is the view's
// (dgpviz/internal/view), chosen by the data's shape (dgpviz/internal/allviews):
// this package names no data set and computes no figure, score or image.
// Sharing a session with followers and relays is dgpviz/internal/share's
// (the session feeds its Hub); what a server takes on is
// dgpviz/internal/admit's: a session's configuration (admit.Config) and
// its limits, the budgets and the ledger of memory reserved, the parked
// state waiting for its page (admit.Lot) and the uploads read into it,
// admission by load, who a client is, per-client rates and the fair pool
// of expensive work. The server keeps its sessions, parks and resumes
// them, feeds admit its sessions' counters and asks it.
// Tests drive sessions through dgpviz/internal/stream/streamtest.
//
// Goroutines per session (each started and ended by the session):
//
//   - the reader (pump.go), on the HTTP handler's goroutine: text messages
//     become commands for the optimizer, with a read limit and pong
//     deadlines; a view's questions (view.Op.Answer, the autoencoder's
//     decode) go to the answering goroutine instead (answer.go);
//   - the optimizer (session.run), the only user of the session's trainer:
//     it steps while playing (or while a "step" command has iterations
//     left), applies commands between iterations through the command table
//     (commands.go) and the view's ops, and publishes a snapshot of the
//     model with its own evaluation of it (publish.go) to a one-slot,
//     latest-wins mailbox (share.Mailbox);
//   - the writer (pump.go), the only writer to the socket: replies and
//     setups, the view's messages (share.Outbox), frames built from the latest
//     publication when the pacer lets one go (pacer.go: once the page has
//     drawn the last one, and no sooner than a gap that keeps frames
//     cheap), and pings;
//   - the answering goroutine, which answers a view's questions from the
//     latest publication;
//   - the view's background work (work.go: the message figure's Monte
//     Carlo worker, the depth comparison, the fit's density), under a
//     context that ends with the session or when the data change view.
//
// A view's own analysis — the explorer's test predictions and geometry
// scores — runs on the writer's goroutine or a short-lived one of its own,
// at the view's cadence (view.Analysis). Work shared by a server's
// sessions (the explorer's baselines) runs under the server's context,
// which Shutdown cancels and waits for. The optimizer never waits for the
// socket; a slow client gets the latest frame, not a backlog. A session's
// context ends all of its work when its socket closes.
//
// The protocol — binary frames with a JSON header and float32 / 16-bit
// quantised sections (dgpviz/internal/wire), JSON commands and replies — is
// versioned and documented in docs/protocol.md.
package stream
