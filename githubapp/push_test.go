package githubapp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/frognano/frognano/internal/fault"
)

func TestParsePushReport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		out  string
		want []refUpdate
	}{
		{"StaleLease", "To https://ghe.example/o/r.git\n!\tHEAD:refs/heads/b\t[rejected] (stale info)\nDone\n",
			[]refUpdate{{flag: '!', to: "refs/heads/b", summary: "[rejected]", reason: "stale info"}}},
		{"RemoteRejected", "To ../r.git\n!\tabc:refs/heads/b\t[remote rejected] (pre-receive hook declined)\nDone\n",
			[]refUpdate{{flag: '!', to: "refs/heads/b", summary: "[remote rejected]", reason: "pre-receive hook declined"}}},
		{"Forced", "To x\n+\tabc:refs/heads/b\t1111111...2222222 (forced update)\nDone\n",
			[]refUpdate{{flag: '+', to: "refs/heads/b", summary: "1111111...2222222", reason: "forced update"}}},
		{"NewBranch", "To x\n*\tabc:refs/heads/b\t[new branch]\nDone\n",
			[]refUpdate{{flag: '*', to: "refs/heads/b", summary: "[new branch]"}}},
		{"NothingElseCounts", "remote: ! [rejected] something\nerror: failed to push some refs\n\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := parsePushReport([]byte(tt.out)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parsePushReport = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestPushOutcomeIsTyped: what a push's error says in words plays no part; git's report does.
func TestPushOutcomeIsTyped(t *testing.T) {
	t.Parallel()
	words := errors.New("git push: exit status 1: ! [rejected] (stale info) [remote rejected]")
	if r, rr := pushOutcome(words); r || rr {
		t.Errorf("pushOutcome of an error that only says so = %v, %v; want false, false", r, rr)
	}
	typed := &gitError{cmd: "push", err: errors.New("exit status 1"), refs: []refUpdate{{flag: '!', summary: "[rejected]", reason: "stale info"}}}
	if r, rr := pushOutcome(typed); !r || rr {
		t.Errorf("pushOutcome of a stale lease = %v, %v; want true, false", r, rr)
	}
	typed.refs[0].summary = "[remote rejected]"
	if r, rr := pushOutcome(typed); r || !rr {
		t.Errorf("pushOutcome of a remote rejection = %v, %v; want false, true", r, rr)
	}
}

// TestPublishRefusedForAReasonFrognanoDoesNotKnow: GitHub refuses the force push with lines
// of its own that name no rule frognano knows. The report's "[remote rejected]" (on stdout
// with --porcelain) makes it a permanent refusal that quotes them, not a retry.
func TestPublishRefusedForAReasonFrognanoDoesNotKnow(t *testing.T) {
	t.Parallel()
	b, in := cloned(t)
	hook := filepath.Join(b.repo.Dir, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'error: pushes are paused for maintenance' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, _, err := b.client.Publish(context.Background(), in)
	var refused *PushRefusedError
	if !errors.As(err, &refused) || refused.Kind != PushRefusedOther || fault.IsTransient(err) {
		t.Fatalf("Publish = %v, want a permanent PushRefusedError of kind %q", err, PushRefusedOther)
	}
	if len(refused.Lines) != 1 || refused.Lines[0] != "pushes are paused for maintenance" {
		t.Errorf("refusal lines = %q", refused.Lines)
	}
}
