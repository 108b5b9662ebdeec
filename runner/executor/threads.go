package executor

import (
	"runtime"
	"sync"
)

// ReservedThreads is how many idle OS threads the executor binary asks ReserveThreads for.
// The executor's own need is small: the protocol reader and a Bash command's wait each hold a
// thread blocked in the kernel, beside the ones running goroutines.
const ReservedThreads = 8

// ReserveThreads makes the Go runtime start n more OS threads now and keep them idle for later.
//
// In a sandbox every thread counts against the container's PID limit, which the model's
// commands share with the executor. A fork bomb fills that limit in a moment, and a Go
// program that then needs a new thread (a goroutine blocked in a system call, such as waiting
// for the timed-out command) cannot get one: the runtime does not fail the call but dies
// ("failed to create new OS thread"), and the tool call with it. Threads made at start, before
// any command runs, are never given back by the runtime: an idle thread waits for work, so
// later needs are met without asking the kernel.
//
// Each of n goroutines locks itself to its thread and blocks until all are running, which
// takes n distinct threads; then they unlock and end, which leaves the threads idle (a thread
// is only ended when its goroutine ends while still locked).
func ReserveThreads(n int) {
	var running sync.WaitGroup
	release := make(chan struct{})
	var done sync.WaitGroup
	for range n {
		running.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			running.Done()
			<-release
			runtime.UnlockOSThread()
		}()
	}
	running.Wait()
	close(release)
	done.Wait()
}
