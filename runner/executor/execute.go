package executor

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Limits the reference applies (its LEAF_* environment overrides are deliberately not
// read: the evaluated setup ran with these defaults, and the sandbox environment is not
// a configuration channel).
const (
	// readOutputChars caps a Read observation, in characters (code points).
	readOutputChars = 20000
	// bashOutputChars caps a Bash observation, in characters (code points).
	bashOutputChars = 30000
	// globLimit is the number of paths a Glob observation lists.
	globLimit = 1000
	// DefaultBashTimeout is the Bash timeout in seconds when the call gives none.
	DefaultBashTimeout = 120.0
)

// Execute runs one tool call and returns the observation text exactly as Leaf would.
//
// workdir is the repository checkout: relative paths resolve against it and Bash runs in
// it. arguments is the raw JSON text the model produced, read as Python's json.loads reads
// it; anything but a JSON object (trailing data included) is treated as {}, and what the
// reference's host would raise before running the tool (a lone surrogate, an integer over
// 4,300 digits, nesting past the recursion limit, a Bash timeout float() or int() refuses)
// is the observation. Every failure becomes an observation of the form "ErrorType: message"
// with Python's exception names, so Execute never fails. Execute is safe for concurrent
// use; a Bash command is killed with its whole process group when ctx ends.
func Execute(ctx context.Context, workdir, tool, arguments string) string {
	obs, _, _ := execute(ctx, workdir, tool, arguments, nil)
	return obs
}

// execute is the tool call; its observation is then read the way the reference's runtime
// reads the tool runner's output, as UTF-8 with errors="replace" (a file name that is not
// UTF-8 reaches a Glob listing as raw bytes).
func execute(ctx context.Context, workdir, tool, arguments string, sw *sweeper) (string, int, *int) {
	obs, killed, exit := executeRaw(ctx, workdir, tool, arguments, sw)
	return decodeReplace([]byte(obs)), killed, exit
}

// executeRaw is Execute with the sweeper Serve uses when Options.KillLeftovers is set; killed
// is how many leftover processes it killed after a Bash timeout or a full pids limit, exit a
// Bash command's exit status when it ran to its end (Response.ExitCode).
func executeRaw(ctx context.Context, workdir, tool, arguments string, sw *sweeper) (obs string, killed int, exit *int) {
	args, err := parseCall(arguments)
	if err == nil {
		err = prepareCall(tool, args)
	}
	if err != nil {
		// The reference raises this before its tool runner starts and ends the run with
		// tool_error; frognano shows the model that text instead (leaf-protocol.md, §10).
		return err.Error(), 0, nil
	}
	cwd, err := physicalDir(workdir)
	if err != nil {
		// The reference chdir()s into the workdir before looking at the tool and reports
		// a failure there with this prefix.
		return "leaf tool_runner error: " + err.Error(), 0, nil
	}
	switch tool {
	case "Read":
		obs, err = toolRead(cwd, args)
	case "Write":
		obs, err = toolWrite(cwd, args)
	case "Edit":
		obs, err = toolEdit(cwd, args)
	case "Glob":
		obs, err = toolGlob(cwd, args)
	case "Bash":
		obs, killed, exit, err = toolBash(ctx, cwd, args, sw)
	default:
		// Over the wire the name is always valid UTF-8 (JSON); a direct caller's bytes
		// are made valid so the observation always is.
		return "Unknown tool: " + strings.ToValidUTF8(tool, "\uFFFD"), 0, nil
	}
	if err != nil {
		var te *toolError
		if errors.As(err, &te) {
			return te.Error(), killed, exit
		}
		// Only toolErrors are expected here; anything else still follows the form.
		return "OSError: " + err.Error(), killed, exit
	}
	return obs, killed, exit
}

// prepareCall is what the reference's host does with the parsed arguments before its tool
// runner starts (environment.py's _execute): it computes the pod command's timeout from a
// Bash call's timeout (float() of it, then int(), which fails for infinity), then writes the
// request as UTF-8 JSON (which fails for a lone surrogate). Either exception ends the
// reference's run.
func prepareCall(tool string, args *pyDict) error {
	if tool == "Bash" {
		t, err := rawTimeout(args)
		if err != nil {
			return err
		}
		if math.IsInf(t, 1) {
			return pyError("OverflowError", "cannot convert float infinity to integer")
		}
	}
	return surrogateCheck(tool, args)
}

// physicalDir is what Python's os.getcwd() returns after os.chdir(workdir): the absolute
// path with symlinks resolved. The reference builds every path from it.
func physicalDir(workdir string) (string, error) {
	if workdir == "" {
		workdir = "."
	}
	abs, err := filepath.Abs(workdir)
	if err != nil {
		return "", pyError("OSError", err.Error())
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", osError(err, workdir)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", osError(err, workdir)
	}
	if !fi.IsDir() {
		return "", osError(syscall.ENOTDIR, workdir)
	}
	return real, nil
}
