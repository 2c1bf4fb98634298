package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/relay"
	"dgpviz/internal/shards"
	"dgpviz/internal/train"
)

// BenchmarkWorkersMillion: evaluations of the bound and gradient (the
// optimal final q(u): two rounds) of the robot-shaped model (1 → 3 → 3
// → 30, 15 inducing points) on the walk file DGPVIZ_WALK names (viz data
// walk -rows 1000000 -o FILE.npy), in this process with one and two
// engine workers, and on 1, 2 and 4 viz worker processes of one engine
// worker each, through an embedded NATS server on loopback. Each
// reports seconds per evaluation (the data are read before the timing)
// and the CPU microseconds per row per evaluation of this process and
// the workers. docs/measurements.md, "Fits on worker processes".
func BenchmarkWorkersMillion(b *testing.B) {
	path := os.Getenv("DGPVIZ_WALK")
	if path == "" {
		b.Skip("set DGPVIZ_WALK to a walk file (viz data walk -rows 1000000 -o FILE.npy)")
	}
	ds, err := dataset.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	nx, ny := dataset.FitNormalizer(ds.X), dataset.FitNormalizer(ds.Y)
	data, err := shards.DataOf(path, ds, nx, ny)
	if err != nil {
		b.Fatal(err)
	}
	x, y := normaliseData(ds, nx, ny)
	n, _ := x.Dims()
	m, err := train.Initialize(x, y, train.InitConfig{Hidden: []int{3, 3}, Inducing: 15, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	opt := engine.Options{Gradient: true, NoOutputMessage: true, OptimalFinalQ: true}
	report := func(b *testing.B, start time.Time, cpu0 float64, pids []int) {
		wall := time.Since(start).Seconds() / float64(b.N)
		b.ReportMetric(wall, "s/eval")
		if cpu0 >= 0 {
			b.ReportMetric((processCPU(pids...)-cpu0)/float64(b.N)/float64(n)*1e6, "µs-cpu/row")
		}
	}
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("local-%dworkers", w), func(b *testing.B) {
			ev := engine.Evaluator{Workers: w}
			cpu0, start := processCPU(0), time.Now()
			for b.Loop() {
				if _, _, err := ev.EvaluateAll(m, opt); err != nil {
					b.Fatal(err)
				}
			}
			report(b, start, cpu0, []int{0})
		})
	}
	dir := b.TempDir()
	cc, wc := mustCreds(b), mustCreds(b)
	ns, err := relay.StartNATS("127.0.0.1:0", relay.ServerOptions{Users: []relay.User{
		{Key: cc.PublicKey(), Role: relay.Coordinator, Fit: "bench"}, {Key: wc.PublicKey(), Role: relay.Worker, Fit: "bench"}}})
	if err != nil {
		b.Fatal(err)
	}
	defer ns.Shutdown()
	wfile := filepath.Join(dir, "worker.creds")
	if err := relay.WriteCredentials(wfile, wc, "bench"); err != nil {
		b.Fatal(err)
	}
	nc, err := relay.Connect(ns.ClientURL(), relay.ConnectOptions{Credentials: cc})
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	for _, workers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("nats-%dprocesses", workers), func(b *testing.B) {
			pids := []int{0}
			for k := range workers {
				cmd := vizCommand("worker", "-nats", ns.ClientURL(), "-nats-creds", wfile, "-fit", "bench", "-id", fmt.Sprintf("w%d", k), "-workers", "1", "-quiet")
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				defer func() { cmd.Process.Kill(); cmd.Wait() }()
				pids = append(pids, cmd.Process.Pid)
			}
			co, err := shards.NewCoordinator(nc, "bench", data, shards.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer co.Close()
			for co.Contributing() < workers { // the workers read the data
				if _, _, err := co.EvaluateAll(m, opt); err != nil {
					b.Fatal(err)
				}
			}
			cpu0, start := processCPU(pids...), time.Now()
			for b.Loop() {
				if _, _, err := co.EvaluateAll(m, opt); err != nil {
					b.Fatal(err)
				}
			}
			report(b, start, cpu0, pids)
		})
	}
}

func mustCreds(b *testing.B) *relay.Credentials {
	c, err := relay.NewCredentials()
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// processCPU is the CPU seconds (user and system) that the processes
// pids (0: this one) have used, from /proc/PID/stat; -1 where there is
// no /proc.
func processCPU(pids ...int) float64 {
	var sum float64
	for _, pid := range pids {
		name := "/proc/self/stat"
		if pid != 0 {
			name = fmt.Sprintf("/proc/%d/stat", pid)
		}
		b, err := os.ReadFile(name)
		if err != nil {
			return -1
		}
		// The fields after the command's parenthesised name: state is
		// the 3rd field, utime and stime the 14th and 15th, in ticks of
		// 1/100 s (USER_HZ on Linux).
		rest := string(b[strings.LastIndexByte(string(b), ')')+2:])
		f := strings.Fields(rest)
		u, _ := strconv.ParseFloat(f[11], 64)
		st, _ := strconv.ParseFloat(f[12], 64)
		sum += (u + st) / 100
	}
	return sum
}
