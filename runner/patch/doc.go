// Package patch owns the agent's diff once it has left the sandbox: it parses the
// output of `git diff --cached --binary BASE` as untrusted bytes, decides which files
// may reach the host's clean clone, and re-serializes the kept part byte for byte so
// that `git apply` accepts it.
//
// The diff was produced by a process the model controlled, so every byte is treated as
// hostile. This package must never touch the filesystem, never run git, and never
// panic on any input; it only reads bytes and returns a verdict. Sanitize refuses the
// whole patch when any file names a path that could write outside the working tree
// (absolute, "..", into .git, through or as an escaping symlink); it quietly drops
// files that are merely unwanted (build litter, workflow changes, submodules).
package patch
