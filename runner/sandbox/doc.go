// Package sandbox owns the Docker container that one agent run (or one test run) executes in,
// through the Docker Engine API: it creates it locked down, copies the repository in, starts the
// tool executor inside it, carries tool calls and commands to it, and removes it.
//
// The container is the trust boundary. It has no network (network mode none), no capabilities,
// no-new-privileges, Docker's default seccomp profile, a non-root user, pids/memory/CPU limits
// and a read-only root filesystem. This package must never put a credential into it: the
// environment is built from scratch (never the host's), and the repository's .git/config is
// replaced by a fresh one with no remote, credential helper, extra header or include. It never
// writes to the host checkout it copies from, and it treats everything that comes out of the
// container (observations, command output) as hostile data, bounded in size.
//
// # Where the files go (why volumes)
//
// With a read-only root filesystem the Engine refuses CopyToContainer into the root filesystem,
// and a tmpfs is invisible to the archive API. The workspace and the executor's directory
// (/opt/frognano) are therefore anonymous volumes: the archive API writes into them like into a
// directory, Docker initialises each from the image's directory of the same path (so the image's
// /workspace owned by uid 1000 stays owned by it), and ContainerRemove with RemoveVolumes deletes
// them with the container. Streaming the executor over an attached stdin into a tmpfs was the
// other option; it needs a shell and a second process per start, and a partial write is harder
// to detect than an archive API error. The repository tar also carries an entry for the workspace
// root owned by the sandbox user, because a volume for a path the image lacks starts out owned
// by root. Ownership is set in the tar headers: CopyUIDGID fails on Docker 20.10 when the
// container's user is numeric. A run packs that tar once (Pack, snapshot.go) and each of its
// sandboxes copies from it while its disk watcher starts (NewFrom).
//
// # How tools run
//
// The executor (cmd/frognano-executor) is started once per sandbox as one long-lived exec whose
// stdin and stdout carry JSON lines (runner/executor's Request, Response, Ready). A tool call is
// then one write and one read on an open stream, instead of one Engine-API exec per call.
// The container's own process is `sleep LIFETIME` under Docker's init, which reaps the orphans
// a command leaves, so that zombies do not eat the pids limit, and ends the container (every
// process in it) at Config.Lifetime even if the process that made it was killed.
//
// # The setup container
//
// A setup container (setup.go) differs from a sandbox where a repository's setup script needs it
// (network, a writable root, root with a package manager's capabilities). Its own program is
// frognano's executor, idle, not the image's sleep, so that when Seal stops it (ending whatever
// setup left running) and starts it again to check its layer for the operator's values
// (seal.go), nothing setup could have replaced runs as root.
//
// # Limits the engine does not give
//
// The workspace's disk use is bounded by a watcher container beside each sandbox (disk.go):
// Docker cannot limit an anonymous volume's size without xfs project quotas. A setup
// container's writes outside its workspace are measured by the engine (setupdisk.go). /dev/shm is
// Docker's private tmpfs, at most 64 MiB and noexec, charged to the memory limit like /tmp.
// No log driver runs, so nothing the sandbox prints lands in a file on the host. OOMKills
// counts processes the kernel killed for memory even when the sandbox survived them.
package sandbox
