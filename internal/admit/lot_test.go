package admit

import (
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// testLot is a lot of named pieces over a ledger of l, with the pieces
// whose state it ended (end) in order.
func testLot(l Limits, grace time.Duration) (*Lot[string], *sync.Mutex, *[]string) {
	var mu sync.Mutex
	var ended []string
	g := NewLedger(l, &mu, false)
	lot := NewLot(g, grace, NewClientRate(ParkBurst, time.Hour), slog.New(slog.NewTextHandler(io.Discard, nil)), func(v string) { ended = append(ended, v) })
	return lot, &mu, &ended
}

// park reserves bytes for a new piece v of client and parks it under v.
func park(t *testing.T, lot *Lot[string], v, client string, bytes int64) *int {
	t.Helper()
	key := new(int)
	if err := lot.Reserve(key, client, bytes); err != nil {
		t.Fatalf("reserving %s: %v", v, err)
	}
	lot.Add(v, key, client, "a test piece", v)
	return key
}

// TestLotPerClient: a client keeps MaxParkedPerClient pieces; the next
// lets its oldest go, ending it and freeing its memory, and leaves other
// clients' alone.
func TestLotPerClient(t *testing.T) {
	lot, mu, ended := testLot(Limits{}, time.Hour)
	mu.Lock()
	defer mu.Unlock()
	other := park(t, lot, "other", "B", 5)
	var keys []*int
	for i := range MaxParkedPerClient + 1 {
		keys = append(keys, park(t, lot, string(rune('a'+i)), "A", 10))
		time.Sleep(time.Millisecond) // distinct parking times
	}
	if !slices.Equal(*ended, []string{"a"}) {
		t.Errorf("ended %q, want the client's oldest, a", *ended)
	}
	if lot.Len() != MaxParkedPerClient+1 || lot.ledger.Held(keys[0]) != 0 || lot.ledger.Held(other) != 5 {
		t.Errorf("%d parked, a holds %d, B's holds %d; want %d, 0, 5", lot.Len(), lot.ledger.Held(keys[0]), lot.ledger.Held(other), MaxParkedPerClient+1)
	}
}

// TestLotTakeAndExpire: a piece taken in time is the taker's, its
// reservation forgotten rather than freed and nothing ended; one left
// past the grace period is ended and its memory freed.
func TestLotTakeAndExpire(t *testing.T) {
	lot, mu, ended := testLot(Limits{}, 50*time.Millisecond)
	mu.Lock()
	kept := park(t, lot, "kept", "A", 10)
	left := park(t, lot, "left", "A", 20)
	if v, ok := lot.Take("kept"); !ok || v != "kept" {
		t.Fatalf("Take = %q, %v", v, ok)
	}
	if _, ok := lot.Take("kept"); ok {
		t.Error("a piece was taken twice")
	}
	mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := lot.Len()
		mu.Unlock()
		if n == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if lot.Len() != 0 || !slices.Equal(*ended, []string{"left"}) {
		t.Fatalf("after the grace period: %d parked, ended %q; want 0, [left]", lot.Len(), *ended)
	}
	if lot.ledger.Held(left) != 0 || lot.ledger.heldExcept(nil) != 0 || lot.ledger.Held(kept) != 0 {
		t.Errorf("reservations after expiry: %d held", lot.ledger.heldExcept(nil))
	}
}

// TestLotReserve: a reservation that does not fit lets go of parked state
// — the largest client's first — but never the reserving key's own, and
// Close empties the lot without ending what it returns.
func TestLotReserve(t *testing.T) {
	lot, mu, ended := testLot(Limits{ServerMemory: 100, SessionMemory: 100}, time.Hour)
	mu.Lock()
	defer mu.Unlock()
	own := park(t, lot, "own", "A", 30)
	park(t, lot, "small", "B", 20)
	park(t, lot, "large", "C", 40)
	if err := lot.Reserve(own, "A", 60); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(*ended, []string{"large"}) {
		t.Errorf("ended %q, want the largest client's, large", *ended)
	}
	if err := lot.Reserve(own, "A", 90); err != nil || !slices.Equal(*ended, []string{"large", "small"}) {
		t.Errorf("reserving 90: %v, ended %q; want small let go too", err, *ended)
	}
	if err := lot.Reserve(own, "A", 101); !errors.Is(err, ErrBusy) || len(*ended) != 2 || lot.Len() != 1 {
		t.Errorf("past the budget: %v, ended %q, %d parked; want ErrBusy with own kept", err, *ended, lot.Len())
	}
	if vs := lot.Close(); !slices.Equal(vs, []string{"own"}) || lot.Len() != 0 || len(*ended) != 2 {
		t.Errorf("Close returned %q, %d left, ended %q", vs, lot.Len(), *ended)
	}
}

// TestUpload: a client's uploads spend its allowances (ParkBurst, then
// ErrTooOften saying when), one is read at a time, and a model file's
// reading is refused past one session's memory and reserved within it.
func TestUpload(t *testing.T) {
	lot, mu, _ := testLot(Limits{SessionMemory: 1000, ServerMemory: 4000}, time.Hour)
	u, err := lot.BeginUpload("A", 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lot.BeginUpload("A", 100); !errors.Is(err, ErrTooOften) || !strings.Contains(err.Error(), "still being read") {
		t.Errorf("a second upload at once: %v", err)
	}
	ro := u.ModelReadOptions()
	if err := ro.Budget(1001); err == nil || !strings.Contains(err.Error(), "-session-memory") {
		t.Errorf("reading past a session's memory: %v", err)
	}
	if err := ro.Budget(900); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if h := lot.ledger.Held(u); h != 900 {
		t.Errorf("the upload holds %d, want 900", h)
	}
	mu.Unlock()
	u.End()
	u.End()
	mu.Lock()
	if h := lot.ledger.heldExcept(nil); h != 0 {
		t.Errorf("after End %d held", h)
	}
	mu.Unlock()
	for range ParkBurst - 2 {
		v, err := lot.BeginUpload("A", 1)
		if err != nil {
			t.Fatal(err)
		}
		v.End()
	}
	if _, err := lot.BeginUpload("A", 1); !errors.Is(err, ErrTooOften) || !strings.Contains(err.Error(), "try again in") {
		t.Errorf("past the burst: %v", err)
	}
}

// TestReserveBuild: a build reserves its estimate's Build beside what the
// key holds; settling keeps the estimate's Bytes after a build, or what
// was held before after a failed one; a build past the budget is refused
// with nothing reserved.
func TestReserveBuild(t *testing.T) {
	lot, mu, _ := testLot(Limits{ServerMemory: 100, SessionMemory: 100}, time.Hour)
	key := new(int)
	held := func() int64 {
		mu.Lock()
		defer mu.Unlock()
		return lot.ledger.Held(key)
	}
	settle, err := lot.ReserveBuild(key, "A", Estimate{Bytes: 20, Build: 30})
	if err != nil || held() != 30 {
		t.Fatalf("the first build: %v, holding %d, want 30", err, held())
	}
	settle(true)
	if held() != 20 {
		t.Errorf("after the build %d, want 20", held())
	}
	settle, err = lot.ReserveBuild(key, "A", Estimate{Bytes: 10, Build: 50})
	if err != nil || held() != 70 {
		t.Fatalf("a build beside the model: %v, holding %d, want 70", err, held())
	}
	settle(false)
	if held() != 20 {
		t.Errorf("after a failed build %d, want what was held, 20", held())
	}
	if _, err := lot.ReserveBuild(key, "A", Estimate{Bytes: 10, Build: 81}); !errors.Is(err, ErrBusy) || held() != 20 {
		t.Errorf("a build past the budget: %v, holding %d", err, held())
	}
}
