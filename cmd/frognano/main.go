// Command frognano is the frognano binary: `frognano run` performs one agent run on a local
// checkout; `frognano serve`, `worker` and `migrate` run the GitHub App service; `frognano
// sandbox` builds the sandbox image and removes sandboxes left behind.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/frognano/frognano/githubapp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "frognano:", githubapp.RedactRun(err.Error()))
		os.Exit(exitCode(err))
	}
}
