package dataset

import "syscall"

// cpuSeconds is the CPU time the process has used, all threads: on a
// busy machine a benchmark's speed per CPU second is steadier than its
// speed per wall second.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
