package main

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

var usageFacts = regexp.MustCompile(`sandboxes\s+(\S+) CPU, peak memory (\S+ \S+)`)

// TestRunsCommand: after a run through the whole service, an operator finds it with
// `frognano runs` and reads its report, trajectory and patch with `frognano runs show`.
func TestRunsCommand(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-pyaverage.json")
	p := e.start()
	id := e.deliver(p, "labeled", "frognano", svcMaintainer).RunIDs[0]
	e.waitState(id, svcRunWait, "succeeded")

	cli := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, e.getenv, &stdout, &stderr); err != nil {
			t.Fatalf("frognano %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return stdout.String()
	}
	list := cli("runs")
	if !strings.Contains(list, fmt.Sprintf("%d  ", id)) || !strings.Contains(list, "succeeded") || !strings.Contains(list, "/pull/") {
		t.Errorf("frognano runs:\n%s", list)
	}
	facts := cli("runs", "show", fmt.Sprint(id))
	for _, want := range []string{"state         succeeded\n", "exit reason   agent", "steps         5", " in 1 try\n"} {
		if !strings.Contains(facts, want) {
			t.Errorf("frognano runs show lacks %q:\n%s", want, facts)
		}
	}
	// What the run used (issue 22): tokens from the scripted model server, the sandboxes' CPU
	// time and peak memory from the engine.
	if m := usageFacts.FindStringSubmatch(facts); m == nil || m[1] == "0s" || m[2] == "0 B" {
		t.Errorf("frognano runs show: no sandbox usage (%q):\n%s", m, facts)
	}
	for _, want := range []string{" prompt, ", " completion\n", "agent attempt", "started by    @" + svcMaintainer + " (labelled the issue)"} {
		if !strings.Contains(facts, want) {
			t.Errorf("frognano runs show lacks %q:\n%s", want, facts)
		}
	}
	// The run's row ends first; the final edit of its status comment follows it (the outbox).
	var audit string
	svcWait(t, 30*time.Second, "the final edit of the status comment in the audit trail", func() (bool, string) {
		audit = cli("runs", "show", fmt.Sprint(id), "--audit")
		return strings.Contains(audit, "comment.edited"), audit
	})
	for _, want := range []string{"reaction.created", "comment.created", "comment.edited", "branch.created", "pull_request.created", "F00D:"} {
		if !strings.Contains(audit, want) {
			t.Errorf("frognano runs show --audit lacks %q:\n%s", want, audit)
		}
	}
	if r := cli("runs", "show", fmt.Sprint(id), "--report"); !strings.Contains(r, "## Tests") {
		t.Errorf("report:\n%.300s", r)
	}
	if tr := cli("runs", "show", fmt.Sprint(id), "--trajectory"); !strings.Contains(tr, `"trajectory_format"`) {
		t.Errorf("trajectory:\n%.300s", tr)
	}
	if pa := cli("runs", "show", fmt.Sprint(id), "--patch"); !strings.Contains(pa, "+    return total(xs) / len(xs)") {
		t.Errorf("patch:\n%s", pa)
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"runs", "show", "999999"}, e.getenv, &stdout, &stderr)
	if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "there is no run 999999") {
		t.Errorf("a missing run: %v", err)
	}
}
