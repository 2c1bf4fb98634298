// Package admit decides what work a server takes on, and when: a
// session's configuration (Config, what a shared link reproduces) checked
// against the server's limits (Limits) and budgets (EstimateSession:
// what a configuration is expected to cost in the view its data choose;
// CheckBudget), the architecture of a view's preset within those limits
// (PresetConfig, LinkPreset, PresetLimits), who a client is (ClientOf,
// RequestClient: one person, as far as an address tells), how often a
// client may do a thing (ClientRate: a token bucket per client), and the
// fair pool (Pool) in which every client's expensive work — a view's
// background work and answers, model builds, the explorer's baselines —
// takes turns on a share of the machine's cores, so that one client's
// work cannot starve the live sessions or other clients.
//
// A server's memory is a Ledger of reservations, and the work waiting
// for its page — a disconnected session waiting to be resumed, an upload
// or a fork — is parked in a Lot, which lets it go when its grace period
// ends or a page that is here needs the room (Victim). Uploads are read
// within the limits (Upload) and checked before they are parked
// (StartModel, StartData). Load decides from the sessions' frame rates
// and commands' waits whether the server takes new sessions.
//
// The transport (dgpviz/internal/stream) admits through it and keeps the
// reservations of the sessions it admitted; the web handlers limit figure
// downloads and connections per client with it.
//
// Besides the engine, whose cost model the estimates use, admit imports:
// train, because a Config holds the trainer's Method and makes its
// TrainerConfig, and an iteration's cost is train's (EstimateIter,
// InducingWithin); view and allviews, because which view shows a data
// set decides its preset's architecture and how many restarts a session
// keeps, so that a link, an upload or a configuration is checked in the
// view it will run in (EstimateSession, WithPreset, Config.Validate);
// modelfile and dataset, for the uploads it checks; and turn, through
// which a job's context takes the pool's turns. EstimateIn takes
// plain counts, so that a session's estimate needs no view.
package admit
