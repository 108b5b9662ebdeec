// Command frognano-executor is the tool executor copied into each sandbox container. It
// serves the Leaf tools (Read, Write, Edit, Glob, Bash) over stdin/stdout as JSON lines.
// It must stay a static, standard-library-only binary, and it never holds a credential.
package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/frognano/frognano/runner/executor"
)

func main() {
	workdir := flag.String("workdir", ".", "repository checkout the tools work in")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// stdout carries the protocol; diagnostics go to stderr.
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := executor.Serve(ctx, os.Stdin, os.Stdout, *workdir); err != nil && !errors.Is(err, context.Canceled) {
		log.Error("serving tool calls", "err", err)
		stop()
		os.Exit(1)
	}
}
