// Package admit decides what work a server takes on, and when: who a
// client is (ClientOf, RequestClient: one person, as far as an address
// tells), how often a client may do a thing (ClientRate: a token bucket
// per client), and the fair pool (Pool) in which every client's
// expensive work — a view's background work and answers, model builds,
// the explorer's baselines — takes turns on a share of the machine's
// cores, so that one client's work cannot starve the live sessions or
// other clients.
//
// The transport (dgpviz/internal/stream) admits through it; the web
// handlers limit figure downloads and connections per client with it.
package admit
