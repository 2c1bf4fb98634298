// Package share shares a live session read-only: the Hub that fans one
// presenter's stream out to followers (each with one-slot, latest-wins
// mailboxes, paced by what its page has drawn), the session's bound
// history as values (a train.History, sent to a follower who joins late as
// a "history" message), the presenter's presentation state, and what a
// relay reads from beyond the process (Catchup, Take, Restore), checked
// before it is believed.
//
// The transport (dgpviz/internal/stream) feeds a session's Hub and answers
// its followers' forks and questions (a relay's through HubSource); relays (dgpviz/internal/relay) feed
// Hubs of their own from NATS and serve their followers with the same
// Hub.Serve. Followers get bytes, never a model.
package share
