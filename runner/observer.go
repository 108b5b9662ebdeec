package runner

import (
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/sandbox"
)

// Observer is told what a run does while it does it, for progress a person watches (the
// status comment, `frognano run`'s terminal, the run page's events). Its methods may be called
// from any goroutine, several at once, and must not block for long; attempt is the attempt's
// number, from 1 (1 for a plain Run). Embed NoObserver to implement only some of them.
type Observer interface {
	// SetupLine receives each line of the setup script's output (redacted) while the
	// environment is built; the attempts of a run build it once, so only the first is told.
	SetupLine(line string)
	// ModelWait is told when an attempt starts waiting on the model server and, with a zero
	// ModelWait, when it stops (leaf.Config.OnWait).
	ModelWait(attempt int, w leaf.ModelWait)
	// SandboxWait is told when a sandbox of an attempt (setup, agent, tests) starts waiting for
	// a free slot (FROGNANO_MAX_SANDBOXES) and, with a SlotWait of the same Purpose and Cap 0,
	// when it has one or gave up; several sandboxes of one attempt may wait at once.
	SandboxWait(attempt int, w sandbox.SlotWait)
	// TestsStart is told when the tests before (after false) or after (true) start running in
	// their sandbox. The before-run shared by several attempts is told once, with the number of
	// the attempt that started it; a tests-after run shared by attempts with the same patch, once.
	TestsStart(attempt int, after bool)
}

// NoObserver observes nothing; embed it to implement part of Observer.
type NoObserver struct{}

func (NoObserver) SetupLine(string)                  {}
func (NoObserver) ModelWait(int, leaf.ModelWait)     {}
func (NoObserver) SandboxWait(int, sandbox.SlotWait) {}
func (NoObserver) TestsStart(int, bool)              {}

// observer is spec's Observer, or NoObserver.
func (s Spec) observer() Observer {
	if s.Observer == nil {
		return NoObserver{}
	}
	return s.Observer
}

// withoutSetupLines is o for a later attempt: the environment is prepared once, so its log
// shows once.
type withoutSetupLines struct{ Observer }

func (withoutSetupLines) SetupLine(string) {}
