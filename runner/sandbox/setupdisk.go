package sandbox

import (
	"context"
	"fmt"
	"time"
)

// Setup's disk use.
//
// A setup container writes in two places: its workspace (a volume, as in any sandbox) and its
// root filesystem, whose own layer becomes the environment image. Neither can be given a size
// by the engines frognano targets (a writable layer's size needs overlay2 on xfs with project
// quotas), so both are measured, like the agent's workspace, and setup is killed past a limit:
//
//   - the workspace by the sandbox's disk watcher (disk.go), against Config.Disk and Files;
//   - the layer by the engine itself (a container inspect with its size: the engine walks the
//     layer's own files as root, outside the container), against the setup's layer limit
//     (FROGNANO_SETUP_DISK). The host asks every layerCheckMin, or four times as long as the
//     last measurement took when that is longer, but never more than layerCheckMax apart, so
//     setup can go past the limit by what it writes in that time (a download at 100 MB/s: a
//     few hundred MB). Commit measures once more after the container stopped, so an image over
//     the limit is never committed.
//
// Setup runs the repository's default branch, not the model; the layer's file count is not
// bounded beyond what the limit's bytes and the time limit allow.
const (
	layerCheckMin = time.Second
	layerCheckMax = 10 * time.Second
)

// LimitError is a setup stopped for one of its limits: the repository's doing, not the
// machinery's.
type LimitError struct{ Reason string }

func (e *LimitError) Error() string { return e.Reason }

// watchSetup starts the setup container's disk watcher on its workspace and, when layer > 0,
// the measurement of its layer.
func (s *Sandbox) watchSetup(ctx context.Context, layer int64) error {
	info, err := s.docker.ContainerInspect(ctx, s.id)
	if err != nil {
		return fmt.Errorf("starting the setup container's disk watcher: inspecting it: %w", err)
	}
	if err := s.startDiskWatcher(ctx, info); err != nil {
		return fmt.Errorf("starting the setup container's disk watcher: %w", err)
	}
	s.setupLayer = layer
	if layer > 0 {
		go s.watchLayer(s.watch.stop)
	}
	return nil
}

// layerOver measures the container's own layer and returns why it is past the limit ("" when
// it is not).
func (s *Sandbox) layerOver(ctx context.Context) (string, error) {
	info, _, err := s.docker.ContainerInspectWithRaw(ctx, s.id, true)
	if err != nil {
		return "", fmt.Errorf("measuring the setup container's changes: %w", err)
	}
	if info.SizeRw == nil {
		return "", fmt.Errorf("measuring the setup container's changes: the engine gave no size")
	}
	if used := *info.SizeRw; used > s.setupLayer {
		return fmt.Sprintf("What setup wrote outside the workspace reached %s, past the setup's disk limit of %s (FROGNANO_SETUP_DISK): setup was killed.",
			FormatBytes(used), FormatBytes(s.setupLayer)), nil
	}
	return "", nil
}

// watchLayer measures the layer until stop, and kills the container past the limit. It fails
// closed: a layer the engine cannot measure while the container runs stops setup too.
func (s *Sandbox) watchLayer(stop <-chan struct{}) {
	for {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), diskMeasureTimeout)
		why, err := s.layerOver(ctx)
		cancel()
		select {
		case <-stop:
			return
		default:
		}
		if err != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			info, ierr := s.docker.ContainerInspect(ctx, s.id)
			cancel()
			if ierr == nil && info.State != nil && !info.State.Running {
				return // stopped for Commit, or ended by itself
			}
			why = fmt.Sprintf("Setup's disk use could no longer be measured (%v): setup was killed.", err)
		}
		if why != "" {
			s.stop(why)
			return
		}
		select {
		case <-stop:
			return
		case <-time.After(min(max(4*time.Since(start), layerCheckMin), layerCheckMax)):
		}
	}
}
