// Package verify owns the repository's own tests as a signal about a run: it picks the
// test command from the host checkout, rewrites it so results can be read per test,
// reads the results back, and compares the run before the agent's change with the
// run after it.
//
// The test command runs in the sandbox; this package never runs anything itself. Its
// output and report files come from code the model could change, so Read treats them
// as hostile input: it never panics, bounds what it keeps, and falls back to the exit
// code when the per-test data is missing or garbled. Detect only reads regular files
// of the host checkout and never follows a symlink out of it.
package verify
