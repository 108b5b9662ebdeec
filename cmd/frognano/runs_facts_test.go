package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	runs "github.com/frognano/frognano/run"
)

// TestRunFactsOfAWaitingRun: `frognano runs show` of a run that waits for its pull request's
// active run says what it waits for, not that it was attempted zero times.
func TestRunFactsOfAWaitingRun(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	r := runs.Record{ID: 9, Owner: "octo", Repo: "pager", Issue: 77, Labeler: "maintainer", State: runs.StateWaiting, CreatedAt: time.Now()}
	if err := writeRunFacts(&out, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "waiting (for the active run of this pull request to end") || strings.Contains(out.String(), "attempts") {
		t.Errorf("frognano runs show:\n%s", out.String())
	}
}

// TestRunsShowGivesTheRefusalsReason: `frognano runs show` of a run GitHub refused gives its
// reason exactly as the status comment gives it (issue 18 section 2), for every reason the
// queue's refusal tests produce against the fake GitHub (testdata/golden/queue-refused-*.txt;
// web's TestRunPageGivesTheRefusalsReason checks the run page against the same files).
func TestRunsShowGivesTheRefusalsReason(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "golden", "queue-refused-*.txt"))
	if err != nil || len(files) < 10 {
		t.Fatalf("%d refusal reasons (%v), want the queue's", len(files), err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		reason := strings.TrimSuffix(string(raw), "\n")
		var out bytes.Buffer
		r := runs.Record{ID: 9, Owner: "octo", Repo: "pager", Issue: 7, Labeler: "maintainer", State: runs.StateFailed,
			Attempts: 1, ExitReason: runs.ExitGitHubRefused, Error: reason, CreatedAt: time.Now()}
		if err := writeRunFacts(&out, r); err != nil {
			t.Fatal(err)
		}
		var shown string
		for _, line := range strings.Split(out.String(), "\n") {
			if rest, ok := strings.CutPrefix(line, "error"); ok {
				shown = strings.TrimLeft(rest, " ")
			}
		}
		if shown != reason {
			t.Errorf("%s: frognano runs show gives\n%s\nwant the comment's reason\n%s", filepath.Base(f), shown, reason)
		}
	}
}
