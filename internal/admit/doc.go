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
// The transport (dgpviz/internal/stream) admits through it and keeps the
// reservations of the sessions it admitted; the web handlers limit figure
// downloads and connections per client with it.
package admit
