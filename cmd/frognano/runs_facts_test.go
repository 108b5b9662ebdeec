package main

import (
	"bytes"
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
