package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
)

// Snapshot is a host checkout packed once for every sandbox of a run: the tar that CopyRepo
// describes (the tracked files with their working-tree content, a fresh .git holding only
// HEAD's history, every entry owned by the sandbox user), written to a temporary file on the
// host and copied from there into each sandbox. A run makes several sandboxes of one checkout
// (the agent's, tests before, tests after, one more of each per attempt), and packing (listing
// what git tracks, reading every file, fetching HEAD's history into a fresh repository) is
// most of what a sandbox would otherwise wait for; copying is one read of the file.
//
// Every sandbox gets the checkout as Pack read it, byte for byte, even if the checkout changes
// during the run: the agent and both test runs see the same tree. The file holds nothing the
// sandboxes do not get anyway; it is created 0600 and unlinked at once, so it is this process's
// alone and nothing of it is left on disk when the process ends, however it ends.
type Snapshot struct {
	uid, gid int
	cancel   context.CancelFunc
	done     chan struct{} // closed when packing ended; then f, size and err are set
	f        *os.File
	size     int64
	err      error
	once     sync.Once
}

// Pack starts packing hostDir for sandboxes whose user is user ("UID:GID", default
// DefaultUser) into a temporary file in dir (default os.TempDir()) and returns at once:
// packing goes on in the background, so that it overlaps with creating the first sandbox.
// CopySnapshot and Wait wait for it. The caller must Close the Snapshot, once no copy from it
// is under way, on every path.
func Pack(ctx context.Context, hostDir, user, dir string) (*Snapshot, error) {
	return pack(ctx, user, dir, func(ctx context.Context, w io.Writer, uid, gid int) error {
		return packRepo(ctx, w, hostDir, uid, gid)
	})
}

// pack starts write in the background, writing a Snapshot's tar for user into a temporary
// file in dir.
func pack(ctx context.Context, user, dir string, write func(ctx context.Context, w io.Writer, uid, gid int) error) (*Snapshot, error) {
	if user == "" {
		user = DefaultUser
	}
	uid, gid, err := parseUser(user)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "frognano-snapshot-*.tar")
	if err != nil {
		return nil, fmt.Errorf("packing the repository: %w", err)
	}
	// Unlinked while open: the file lives as long as this descriptor, and no crash leaves it.
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("packing the repository: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &Snapshot{uid: uid, gid: gid, cancel: cancel, done: make(chan struct{}), f: f}
	go func() {
		defer close(p.done)
		p.err = write(ctx, f, uid, gid)
		if p.err == nil {
			p.size, p.err = f.Seek(0, io.SeekCurrent)
		}
	}()
	return p, nil
}

// Wait waits until packing has ended and returns its error.
func (p *Snapshot) Wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return fmt.Errorf("waiting for the repository to be packed: %w", ctx.Err())
	}
}

// Size is the tar's size in bytes, once Wait returned nil.
func (p *Snapshot) Size() int64 {
	<-p.done
	return p.size
}

// Close stops packing if it still runs and frees the file. A copy from the Snapshot that is
// still under way fails.
func (p *Snapshot) Close() error {
	var err error
	p.once.Do(func() {
		p.cancel()
		<-p.done
		err = p.f.Close()
	})
	return err
}

// CopySnapshot copies p into the workspace, waiting for it to be packed first. p must have
// been packed for the sandbox's user.
func (s *Sandbox) CopySnapshot(ctx context.Context, p *Snapshot) error {
	if err := p.Wait(ctx); err != nil {
		return err
	}
	if p.uid != s.uid || p.gid != s.gid {
		return fmt.Errorf("copying the repository: packed for %d:%d, the sandbox's user is %d:%d", p.uid, p.gid, s.uid, s.gid)
	}
	// A reader of its own: sandboxes of one run copy from the file at the same time.
	r := io.NewSectionReader(p.f, 0, p.size)
	if err := s.docker.CopyToContainer(ctx, s.id, s.cfg.Workdir, r, container.CopyToContainerOptions{}); err != nil {
		return fmt.Errorf("copying the repository into the sandbox: %w", err)
	}
	return nil
}

// NewFrom is New, with p copied into the workspace while the disk watcher starts: when it
// returns, the sandbox runs, is watched and holds the checkout. cfg.Ready then includes the
// copy. The copy is frognano's own bytes of a bounded size, written before anything runs in
// the sandbox, so it needs no watcher yet; nothing else runs there before both are done, and
// a checkout larger than the disk limit is stopped by the watcher's first measurement.
func NewFrom(ctx context.Context, docker *client.Client, cfg Config, p *Snapshot, runID, purpose string) (*Sandbox, error) {
	if p == nil {
		return nil, errors.New("creating sandbox container: no repository snapshot")
	}
	cfg.repo = p
	return create(ctx, docker, cfg, runID, purpose, nil)
}

// watchAndFill starts the disk watcher and, for NewFrom, copies the checkout at the same time.
func (s *Sandbox) watchAndFill(ctx context.Context) error {
	// Inspected first: the engine holds the container while it extracts a copy, and the
	// watcher needs only the workspace volume's name from it.
	info, err := s.docker.ContainerInspect(ctx, s.id)
	if err != nil {
		return fmt.Errorf("starting the sandbox's disk watcher: inspecting the sandbox: %w", err)
	}
	if s.cfg.repo == nil {
		if err := s.startDiskWatcher(ctx, info); err != nil {
			return fmt.Errorf("starting the sandbox's disk watcher: %w", err)
		}
		return nil
	}
	copied := make(chan error, 1)
	go func() { copied <- s.CopySnapshot(ctx, s.cfg.repo) }()
	var errs []error
	if err := s.startDiskWatcher(ctx, info); err != nil {
		errs = append(errs, fmt.Errorf("starting the sandbox's disk watcher: %w", err))
	}
	// Both are waited for: Close must not remove the container while the copy still writes.
	if err := <-copied; err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
