package admit

import (
	"strings"
	"testing"
	"time"

	"dgpviz/internal/train"
)

// TestBudgets: the step demo and the robot preset are cheap and admitted;
// the configuration that took 457 MB and ran at 3 iterations a second in
// the hardening campaign (2,000 rows, hidden 8,8,8,8,8, 64 inducing
// points) is refused by the default budgets with an error that says what
// to reduce; sixteen step demos fit in the server's budget.
func TestBudgets(t *testing.T) {
	l := DefaultLimits()
	step := EstimateConfig(Config{Hidden: []int{1, 1}, Inducing: 12}, 30, 1, 1)
	robot := EstimateConfig(Config{Hidden: []int{3, 3}, Inducing: 20}, 215, 1, 30)
	big := Config{Hidden: []int{8, 8, 8, 8, 8}, Inducing: 64}
	bigE := EstimateConfig(big, 2000, 1, 1)
	t.Logf("step demo %s, %v per iteration; robot preset %s, %v; the campaign's model %s, %v",
		MiB(step.Bytes), step.IterTime, MiB(robot.Bytes), robot.IterTime, MiB(bigE.Bytes), bigE.IterTime)
	if step.Bytes > 16<<20 || step.IterTime > 10*time.Millisecond {
		t.Errorf("the step demo is estimated at %s and %v per iteration", MiB(step.Bytes), step.IterTime)
	}
	if robot.Bytes > 64<<20 || robot.IterTime > 50*time.Millisecond {
		t.Errorf("the robot preset is estimated at %s and %v per iteration", MiB(robot.Bytes), robot.IterTime)
	}
	if 16*step.Bytes > l.ServerMemory {
		t.Errorf("16 step demos (%s) exceed the server budget %s", MiB(16*step.Bytes), MiB(l.ServerMemory))
	}
	// Measured 457 MB (RSS) and 0.33 s per iteration: the estimate must
	// be of that order, and the defaults refuse it.
	if bigE.Bytes < 200<<20 || bigE.IterTime < 100*time.Millisecond {
		t.Errorf("the campaign's model is estimated at only %s and %v", MiB(bigE.Bytes), bigE.IterTime)
	}
	err := CheckBudget(bigE, l)
	if err == nil || !strings.Contains(err.Error(), "fewer inducing points") || !strings.Contains(err.Error(), "(the server's -session-memory raises the limit)") {
		t.Fatalf("the campaign's model: %v, want a refusal saying what to reduce and which flag raises the limit", err)
	}
	if err := CheckBudget(bigE, Limits{}); err != nil {
		t.Errorf("zero budgets (none) refused: %v", err)
	}
}

// TestEstimateStochasticStep: above train.StochasticRows a session's
// default method is SVI, whose iteration evaluates a minibatch, so its
// iteration time is a minibatch's (the 100,000-row walk was refused with
// a full pass's); Adam, asked for, evaluates every row.
func TestEstimateStochasticStep(t *testing.T) {
	c := DefaultConfig()
	c.Hidden, c.Inducing = []int{3, 3}, 15
	const n = 100000
	svi := EstimateConfig(c, n, 1, 30)
	c.Method = train.Adam{}
	full := EstimateConfig(c, n, 1, 30)
	if svi.IterTime*20 > full.IterTime {
		t.Errorf("an SVI step of %d rows is estimated at %v, a full pass at %v: want the minibatch's (1/%d of the rows)", n, svi.IterTime, full.IterTime, n/train.DefaultStochasticBatch)
	}
	if l := DefaultLimits(); svi.IterTime > l.MaxIterTime {
		t.Errorf("an SVI step of %d rows is estimated at %v, more than the default limit %v", n, svi.IterTime, l.MaxIterTime)
	}
}
