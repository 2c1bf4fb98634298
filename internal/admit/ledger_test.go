package admit

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// TestVictim: parked state goes the oldest first of the client that holds
// the most, and only the named client's when one is named.
func TestVictim(t *testing.T) {
	t0 := time.Unix(1000, 0)
	parked := []Parked{
		{Client: "x", Bytes: 10, At: t0.Add(time.Second)},
		{Client: "x", Bytes: 10, At: t0},
		{Client: "y", Bytes: 15, At: t0.Add(-time.Hour)},
	}
	for _, c := range []struct {
		client string
		want   int
	}{{"", 1}, {"x", 1}, {"y", 2}, {"z", -1}} {
		if got := Victim(parked, c.client); got != c.want {
			t.Errorf("Victim(%q) = %d, want %d", c.client, got, c.want)
		}
	}
	if got := Victim(nil, ""); got != -1 {
		t.Errorf("Victim of nothing = %d", got)
	}
}

// TestLedgerReserve: one client's share (half the server's budget) and
// the server's budget refuse with ErrBusy unless evicting parked state
// makes room; shrinking and releasing give the memory back.
func TestLedgerReserve(t *testing.T) {
	var mu sync.Mutex
	g := NewLedger(Limits{ServerMemory: 100, SessionMemory: 10}, &mu, false)
	none := func(string) (int64, bool) { return 0, false }
	if g.ClientShare() != 50 {
		t.Fatalf("client share %d, want half the server's 100", g.ClientShare())
	}
	a1, a2, b, c := new(int), new(int), new(int), new(int)
	if err := g.Reserve(a1, "A", 40, none); err != nil {
		t.Fatal(err)
	}
	if err := g.Reserve(a2, "A", 20, none); !errors.Is(err, ErrBusy) {
		t.Fatalf("client A past its share: %v, want ErrBusy", err)
	}
	if err := g.Reserve(b, "B", 50, none); err != nil {
		t.Fatal(err)
	}
	if err := g.Reserve(c, "C", 20, none); !errors.Is(err, ErrBusy) {
		t.Fatalf("past the server's budget: %v, want ErrBusy", err)
	}
	var asked []string
	evict := func(client string) (int64, bool) {
		asked = append(asked, client)
		if g.Held(a1) == 0 {
			return 0, false
		}
		freed := g.Held(a1)
		g.Release(a1)
		return freed, true
	}
	if err := g.Reserve(c, "C", 20, evict); err != nil || len(asked) != 1 || asked[0] != "" {
		t.Fatalf("with parked state to let go: %v, evictions asked %q", err, asked)
	}
	if g.ClientHeld("A", nil) != 0 || g.ClientHeld("C", nil) != 20 || g.Held(b) != 50 {
		t.Errorf("held A %d, C %d, B %d; want 0, 20, 50", g.ClientHeld("A", nil), g.ClientHeld("C", nil), g.Held(b))
	}
	g.Set(b, "B", 30)
	if g.ClientHeld("B", b) != 0 || g.Held(b) != 30 {
		t.Errorf("after shrinking B holds %d", g.Held(b))
	}
	g.Forget(b)
	if g.Held(b) != 0 || g.heldExcept(nil) != 20 {
		t.Errorf("after forgetting B: %d, all %d", g.Held(b), g.heldExcept(nil))
	}
	if err := NewLedger(Limits{}, &mu, false).Reserve(a1, "A", 1<<40, none); err != nil {
		t.Errorf("no budgets refused: %v", err)
	}
}
