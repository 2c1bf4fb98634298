package admit

import (
	"context"
	"testing"
	"time"
)

// TestClientRateWait: a client's burst goes at once, the next waits for
// its token, another client does not wait for the first, and a context's
// end stops the wait.
func TestClientRateWait(t *testing.T) {
	const every = 40 * time.Millisecond
	r := NewClientRate(2, every)
	ctx := context.Background()
	t0 := time.Now()
	if !r.Wait(ctx, "a") || !r.Wait(ctx, "a") || !r.Wait(ctx, "b") {
		t.Fatal("the burst was refused")
	}
	if d := time.Since(t0); d >= every/2 {
		t.Errorf("the burst took %v", d)
	}
	if !r.Wait(ctx, "a") {
		t.Fatal("the wait for a token failed")
	}
	if d := time.Since(t0); d < every*3/4 {
		t.Errorf("the third command of a burst of 2 went after %v, want about %v", d, every)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if r.Wait(done, "a") {
		t.Error("a wait went on after its context ended")
	}
}
