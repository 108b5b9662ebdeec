// Command dumpable-executor is frognano-executor without its hardening, for tests only: it
// stays dumpable and serves on its own stdin and stdout, as the executor did before
// executor.Harden, so a command in the sandbox can write to its stdout through
// /proc/PID/fd/1. The tests use it to prove the host's second line of defence: a line that
// does not carry the call's nonce is refused even when a process does reach the stream.
// It lives under testdata so that no build of the project ever includes it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/frognano/frognano/runner/executor"
)

func main() {
	workdir := flag.String("workdir", ".", "repository checkout the tools work in")
	killLeftovers := flag.Bool("kill-leftovers", false, "as frognano-executor's flag")
	observe := flag.Bool("observe-network", false, "as frognano-executor's flag")
	flag.Parse()
	if *observe {
		if err := executor.Observe(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "observing the network:", err)
			os.Exit(1)
		}
		return
	}
	if err := executor.Serve(context.Background(), os.Stdin, os.Stdout, *workdir, executor.Options{KillLeftovers: *killLeftovers}); err != nil {
		fmt.Fprintln(os.Stderr, "serving tool calls:", err)
		os.Exit(1)
	}
}
