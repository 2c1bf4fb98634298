// Package turn lets a server share its cores among clients: expensive work
// (an optimizer's iterations in a background fit, a Monte Carlo figure)
// done under a context that carries a Taker waits for its turn before each
// piece and gives the turn back after it, so that however many goroutines
// the work runs, it uses the cores the Taker hands out and no more. A
// context without a Taker runs everything at once: the command line's fits
// are not slowed.
//
// The server's side (the pool that decides whose turn it is) is
// dgpviz/internal/stream's; train's fits and the views' Monte Carlo work
// take turns through this package, which knows nothing of clients.
package turn

import "context"

// A Taker waits until the work under ctx may use cores (as many as it
// says: a piece that runs goroutines of its own uses more than one) and
// returns the function that gives them back, or the reason it may not
// (ctx ended).
type Taker func(ctx context.Context, cores int) (done func(), err error)

type key struct{}

// With returns ctx whose work takes turns with t.
func With(ctx context.Context, t Taker) context.Context {
	return context.WithValue(ctx, key{}, t)
}

// Take waits for the turn of the work under ctx and returns the function
// that ends it; with no Taker in ctx it returns at once (but still fails
// when ctx has ended).
func Take(ctx context.Context) (done func(), err error) { return TakeCores(ctx, 1) }

// TakeCores is Take for a piece of work that uses cores cores at once.
func TakeCores(ctx context.Context, cores int) (done func(), err error) {
	if t, ok := ctx.Value(key{}).(Taker); ok && t != nil {
		return t(ctx, max(cores, 1))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return func() {}, nil
}

// Do runs f in one turn of the work under ctx, and returns ctx's error
// instead when the turn did not come.
func Do(ctx context.Context, f func()) error { return DoCores(ctx, 1, f) }

// DoCores is Do for a piece of work that uses cores cores at once.
func DoCores(ctx context.Context, cores int, f func()) error {
	done, err := TakeCores(ctx, cores)
	if err != nil {
		return err
	}
	defer done()
	f()
	return nil
}
