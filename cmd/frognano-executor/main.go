// Command frognano-executor is the tool executor copied into each sandbox container. It
// serves the Leaf tools (Read, Write, Edit, Glob, Bash) over stdin/stdout as JSON lines.
// It must stay a static, standard-library-only binary, and it never holds a credential.
//
// It shares its user with the model's commands, so before anything else it hardens itself
// (executor.Harden): non-dumpable, protocol streams no child can inherit. Then it starts the
// OS threads it will need (executor.ReserveThreads), while the container's PID limit has room.
//
// With -observe-network it is the agent sandbox's network observer instead (executor.Observe),
// which the host starts as root without capabilities: the same binary, so nothing new enters
// the sandbox. In a setup container it is the container's own process (-idle: it does nothing
// until the container's lifetime ends, so that nothing of the image runs when the container is
// started again after setup) and the seal check (-seal, as root: executor.Seal reads the files
// setup changed for the operator's values; runner/env).
package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/frognano/frognano/runner/executor"
)

func main() {
	// Diagnostics go to stderr; the protocol runs on the streams Harden returns. Their error
	// key is internal/logging's ErrorKey, spelled out: the executor depends on nothing of
	// frognano but runner/executor (TestStaticStandardLibraryOnly).
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	in, out, err := executor.Harden()
	if err != nil {
		log.Error("hardening the executor", "error", err)
		os.Exit(1)
	}
	executor.ReserveThreads(executor.ReservedThreads)
	workdir := flag.String("workdir", ".", "repository checkout the tools work in")
	killLeftovers := flag.Bool("kill-leftovers", false, "after a Bash timeout, kill every other process of this user (sandbox only; refused as root)")
	observe := flag.Bool("observe-network", false, "instead of serving tools, be the sandbox's network observer on "+executor.ObserverAddr+" (run as root without capabilities)")
	seal := flag.Bool("seal", false, "instead of serving tools, check the files a setup container's layer holds for the operator's values (a JSON request on stdin; run as root in a setup container)")
	idle := flag.Duration("idle", 0, "instead of serving tools, do nothing for this long (a setup container's own process)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *idle > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(*idle):
		}
		return
	}
	if *seal {
		if err := executor.Seal(ctx, "/", in, out); err != nil {
			log.Error("checking the environment for the operator's values", "error", err)
			stop()
			os.Exit(1)
		}
		return
	}
	if *observe {
		if err := executor.Observe(ctx, in, out); err != nil && !errors.Is(err, context.Canceled) {
			log.Error("observing the network", "error", err)
			stop()
			os.Exit(1)
		}
		return
	}
	err = executor.Serve(ctx, in, out, *workdir, executor.Options{KillLeftovers: *killLeftovers})
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Error("serving tool calls", "error", err)
		stop()
		os.Exit(1)
	}
}
