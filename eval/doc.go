// Package eval measures the model the way the service runs it: SWE-bench-style tasks (a
// repository at a base commit, a problem statement, hidden tests) run through runner.RunAll
// exactly as a labelled issue would, then the model's patch and the task's test patch are
// applied together in a fresh sandbox and the named tests decide (Run). It also reads two
// evaluations side by side (Compare) and mines a repository's own history for tasks (Mine).
//
// eval never shows a task's test patch or reference fix to the model: the problem statement
// is the whole task. It never talks to GitHub and never holds a token; the only network it
// may use is a clone URL a task file names. Everything in a task file is untrusted input: a
// malformed line is reported and skipped, never half-used, and a task that names what the
// operator did not allow (Allow: an image, a folder outside the task file's folder and
// --repos, a plain or local clone URL) is refused with its id and the field before anything
// of it is used (Check), and checked again on the host when it runs.
package eval
