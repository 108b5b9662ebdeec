// Package executor is the tool executor that runs inside the sandbox: one long-lived
// process that reads tool requests as JSON lines and writes observations as JSON lines.
// It implements the five Leaf tools (Read, Write, Edit, Glob, Bash) exactly as
// docs/leaf-protocol.md states them.
//
// The executor runs on the untrusted side of the trust boundary. It must never hold or
// receive a credential, must never reach the network, and imports only the standard
// library (and internal/secretform, which imports only the standard library) so that it stays
// a small static binary. Its one exception to "no credential", the seal check (Seal), runs in
// a setup container after setup and every process it left are gone, and is handed the
// operator's setup values, which setup itself was given, to find them; it never prints one. The model's commands run beside it as
// the same user, so it keeps them away from its protocol: Harden makes the process
// non-dumpable (no ptrace, no /proc/PID/fd or /proc/PID/mem for them), no child inherits
// the protocol's stdin or stdout, and every response echoes the per-call Nonce that only
// the host and the executor know.
package executor

import "time"

// Request is one tool call sent from the host to the executor, one JSON object per line.
type Request struct {
	// ID is chosen by the host and echoed in the Response.
	ID string `json:"id"`
	// Nonce is a fresh secret the host picks for every call and the executor echoes in the
	// Response. It only ever travels over the executor's stdin and stdout and lives in the
	// executor's memory, none of which the model's processes can read, so a line they
	// manage to forge cannot carry it. The executor never passes it on (not in argv, the
	// environment or a file).
	Nonce string `json:"nonce,omitempty"`
	// Tool is the function name the model called, e.g. "Read". Unknown names produce
	// the observation "Unknown tool: NAME".
	Tool string `json:"tool"`
	// Arguments is the raw arguments string exactly as the model produced it. It may be
	// malformed JSON or not an object; the executor then treats it as {} (Leaf rule).
	Arguments string `json:"arguments"`
}

// Response is the executor's answer to one Request, one JSON object per line of at most
// MaxResponseBytes bytes.
type Response struct {
	ID    string `json:"id"`
	Nonce string `json:"nonce,omitempty"`
	// Observation is Leaf's text, byte for byte; empty when Error is set.
	Observation string `json:"observation"`
	// Error is set when the executor cannot give the observation: it would not fit in
	// MaxResponseBytes. The host ends the run as a tool error with this reason.
	Error string `json:"error,omitempty"`
	// Killed counts the processes the executor killed after a Bash timeout (or when bash
	// could not start for a full pids limit) besides the command's own process group: background processes of earlier calls, and whatever
	// escaped the group (setsid), a fork bomb included. It is never part of the observation.
	Killed int `json:"killed,omitempty"`
	// Alive marks a heartbeat, not an answer: while a call runs, the executor writes one
	// every HeartbeatInterval with the call's id and nonce (and nothing else), so that the
	// host can tell a long call from an executor that a process in the sandbox stopped
	// (SIGSTOP) or that is otherwise stuck. The call's answer follows later, without it.
	Alive bool `json:"alive,omitempty"`
	// ExitCode is a Bash command's exit status (minus the signal number when a signal ended
	// bash) when it ran to its end: nil for other tools, a timeout, or a command that could
	// not start. It is never part of the observation, so unlike the "Exit code: N" line there
	// (which the command's own output can imitate), no command can forge it; the host reads it
	// to tell a command that was not found (127) from one that printed so (runner/egress).
	ExitCode *int `json:"exit_code,omitempty"`
}

// HeartbeatInterval is how often the executor writes a heartbeat (Response.Alive) while a call
// runs; no heartbeat is written after the call's answer.
const HeartbeatInterval = 5 * time.Second

// MaxResponseBytes bounds one response line, its "\n" included; the host refuses a longer
// line. A capped observation (Bash's 30,000 characters, Read's 20,000) takes at most about
// 180 KB even when every character is a 6-byte JSON escape. Only a Glob of 1,000 very long
// paths, or an error echoing a huge argument, can go further, and 512 KiB of text is about
// the model's whole context window (131K tokens), so it could not be used anyway: such an
// answer is replaced by an Error.
const MaxResponseBytes = 512 << 10

// Ready is the first line the executor writes once it is serving.
type Ready struct {
	Ready   bool   `json:"ready"`
	Workdir string `json:"workdir"`
	PID     int    `json:"pid"`
}

// Options are the executor's settings besides its working directory.
type Options struct {
	// KillLeftovers: after a Bash timeout, and when bash cannot start because the pids
	// limit is full (EAGAIN; bash is then started once more), kill every process of the
	// executor's user other than the executor, the PID namespace's init, and the processes
	// that existed when Serve started (the container's own), repeating until none is left,
	// and report how many in Response.Killed. Only for an executor alone in a sandbox's PID namespace; Serve refuses
	// it when running as root.
	KillLeftovers bool
}
