// Package executor is the tool executor that runs inside the sandbox: one long-lived
// process that reads tool requests as JSON lines and writes observations as JSON lines.
// It implements the five Leaf tools (Read, Write, Edit, Glob, Bash) exactly as
// shared/leaf-protocol.md states them.
//
// The executor runs on the untrusted side of the trust boundary. It must never hold or
// receive a credential, must never reach the network, and imports only the standard
// library so that it stays a small static binary.
package executor

// Request is one tool call sent from the host to the executor, one JSON object per line.
type Request struct {
	// ID is chosen by the host and echoed in the Response.
	ID string `json:"id"`
	// Tool is the function name the model called, e.g. "Read". Unknown names produce
	// the observation "Unknown tool: NAME".
	Tool string `json:"tool"`
	// Arguments is the raw arguments string exactly as the model produced it. It may be
	// malformed JSON or not an object; the executor then treats it as {} (Leaf rule).
	Arguments string `json:"arguments"`
}

// Response is the executor's answer to one Request, one JSON object per line.
type Response struct {
	ID          string `json:"id"`
	Observation string `json:"observation"`
}

// Ready is the first line the executor writes once it is serving.
type Ready struct {
	Ready   bool   `json:"ready"`
	Workdir string `json:"workdir"`
	PID     int    `json:"pid"`
}
