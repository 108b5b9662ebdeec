package sandbox

import (
	"context"
	"fmt"

	"github.com/docker/docker/api/types/container"
)

// Quiesce ends every process in the sandbox and starts it again, empty: the container is
// stopped with SIGKILL (the kernel ends its whole PID namespace, so no process of the model
// survives, however it hid, forked, renamed itself or reused a PID) and started anew. The
// workspace volume keeps the files; /tmp, a tmpfs, starts empty. The executor is gone
// afterwards, so Call fails; Exec works. The runner uses it before taking the diff, so that
// nothing the model left running can write into the diff or the files while it is taken.
func (s *Sandbox) Quiesce(ctx context.Context) error {
	if e := s.exe.Load(); e != nil {
		e.close() // its stream ends with the container: expected, not a failure
	}
	s.closeObserver() // so does the network observer's: NetworkReport comes before
	zero := 0
	if err := s.docker.ContainerStop(ctx, s.id, container.StopOptions{Signal: "SIGKILL", Timeout: &zero}); err != nil {
		return fmt.Errorf("stopping the sandbox to end the model's processes: %w", err)
	}
	if err := s.docker.ContainerStart(ctx, s.id, container.StartOptions{}); err != nil {
		return fmt.Errorf("starting the sandbox again after ending the model's processes: %w", err)
	}
	return nil
}
