package sandbox_test

import (
	"context"
	"testing"

	"github.com/frognano/frognano/runner/sandbox"
)

// TestListShowsSandboxesNotTheirWatchers: `frognano sandbox ls` reads the engine through List,
// which names each sandbox by its labels and leaves its disk watcher out.
func TestListShowsSandboxesNotTheirWatchers(t *testing.T) {
	t.Parallel()
	sb := readySandbox(t, testConfig(), "")
	watcher := watcherOf(t, sb.ID())
	if watcher == "" {
		t.Fatal("the sandbox has no disk watcher")
	}
	list, err := sandbox.List(context.Background(), docker)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, l := range list {
		switch l.ID {
		case sb.ID():
			found = true
			if l.Purpose != "agent" || l.RunID != t.Name() || l.Owner != "sandbox-test" || l.State != "running" {
				t.Errorf("List gives %+v for the sandbox", l)
			}
		case watcher:
			t.Errorf("List lists the disk watcher %s", watcher)
		}
	}
	if !found {
		t.Errorf("List does not list the sandbox %s", sb.ID())
	}
}
