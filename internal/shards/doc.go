// Package shards evaluates the bound of a deep GP whose data are spread
// over worker processes, over NATS: the paper's parallel computation
// (Gal et al. 2014), on the engine's own evaluation of ranges of rows.
//
// Every term of the bound but the KL is a sum over the data, and so is
// its gradient. A Coordinator splits the rows into shards, contiguous
// ranges made of whole chunks of the engine's chunked evaluation
// (engine.EvaluateRange), and asks the Workers it has heard from to
// evaluate them: the parameters go out, each shard's sums of the data
// terms and its gradient come back, and the Coordinator adds them up in
// the shards' order (engine.SumParts), the KL once (with the first
// shard's). With the final layer's q(u) at its optimum a first round
// gathers the shards' Φ and Ψ1ᵀY (engine.FinalStats), which the
// Coordinator solves. The shards do not depend on the workers: their sum
// is the same bits for any number of workers, and equals one process's
// chunked evaluation up to the grouping of its sums.
//
// A minibatch of at least Options.MinBatch rows goes to the shards that
// hold its rows, each evaluating its part (engine.EvaluateBatchPart).
//
// A Coordinator is a train.Evaluator: the Trainer, its methods and its
// math are unchanged; only the evaluations move.
//
// Workers announce themselves every HelloEvery on their fit's subject;
// the Coordinator uses those heard within HelloTimeout, from the next
// evaluation on. A shard whose worker does not answer (a process killed:
// NATS says no one listens; one hung: its announcements stop) is asked
// of another worker, which evaluates it from its own copy of the data.
// Parameters, statistics and gradients travel as little-endian float64
// (wire.go); a reply is checked against its request (the worker, the
// evaluation, the rows) and refused with an error if it is malformed or
// not the one asked for. The NATS server's permissions (relay.Worker,
// relay.Coordinator) keep a worker to its fit's subjects.
package shards
