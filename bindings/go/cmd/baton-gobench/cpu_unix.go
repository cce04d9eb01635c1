//go:build unix

package main

import "syscall"

// cpuS is this process's user and system CPU time so far, every thread,
// in seconds (getrusage, as baton-bench reads its own).
func cpuS() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec) + float64(ru.Utime.Usec)/1e6 +
		float64(ru.Stime.Sec) + float64(ru.Stime.Usec)/1e6
}
