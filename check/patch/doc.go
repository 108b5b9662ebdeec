// Package patch owns the agent's diff once it has left the sandbox. The diff was produced
// by a process the model controlled, so every byte is treated as hostile, in two stages:
//
//   - Sanitize parses the output of `git diff --binary BASE` as untrusted bytes and never
//     touches the filesystem or runs anything: it refuses the whole patch when any file
//     names a path that could write outside the working tree (absolute, "..", into .git,
//     through or as an escaping symlink), quietly drops files that are merely unwanted
//     (build litter, workflow changes, submodules), and re-serializes the kept part byte for
//     byte so that `git apply` accepts it. It never panics on any input.
//   - ApplyToBase and CheckTree do not trust the diff text at all: git applies the kept part
//     to the base commit of the host's own clone in a throwaway index and object directory,
//     and the tree git really built is compared with the base (modes and objects read from
//     git) before anything is published. With Options.Values, every file the tree publishes
//     is read whole, as bytes, for the values frognano keeps secret (values.go): a diff's text
//     does not show a value in a binary file, nor one the patch encoded. This is the only git
//     this package runs, always on the host's clone with an isolated configuration, never on a
//     .git the sandbox wrote.
//
// Published lists, from the same throwaway tree, every file the patch will publish with its
// whole bytes and the base's bytes of that path (or of a rename's source): what a check of the
// published content reads (the secrets scan, the check of the operator's values). It is the one
// reader of the published files: CheckTree's value check goes through it too.
//
// It is one of the check packages (check/...), which judge what comes out of a sandbox for both
// sides of the trust boundary: it must never hold a credential, start or reach a sandbox, talk to
// GitHub or the network, or import runner, githubapp, queue, run, server or web
// (internal/layout's test checks the imports).
package patch
