package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
)

// TestServiceResumesARunAfterACrash kills a real `frognano serve` process (SIGKILL, no
// shutdown at all) while its agent sleeps in a sandbox, then starts a new service of the same
// owner on the same database and Docker engine. The new process removes the orphan sandbox and
// the stale clone at start, takes the stuck job back at once (no waiting for River's rescuer),
// the second attempt fixes the bug, and exactly one PR exists.
func TestServiceResumesARunAfterACrash(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-crash.json")
	_, bin := svcBinaries(t, true)

	// 1. A real process, so that the crash is real: its River job stays `running`, its run
	// row stays `running` and its sandbox stays up.
	childLog := &svcBuffer{}
	child, stderr := svcChild(t, bin, e.env, childLog, "serve")
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = child.Process.Kill()
			_ = child.Wait()
		}
		if t.Failed() {
			t.Logf("crashed process's log:\n%s", svcTail(childLog.String(), 8000))
		}
	})
	addr := svcChildAddr(t, stderr, childLog)
	first := &svcProc{addr: addr}

	id := e.deliver(first, "labeled", "frognano", svcMaintainer).RunIDs[0]
	orphan := e.waitAgentContainer(id)
	svcWait(t, time.Minute, "the first attempt's model turn", func() (bool, string) {
		n := len(e.model.Requests())
		return n == 1, fmt.Sprintf("%d requests", n)
	})

	// 2. The crash.
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	killed = true
	ctx := context.Background()
	var jobID int64
	var jobState string
	if err := e.db.QueryRow(ctx, `SELECT j.id, j.state FROM runs r JOIN river_job j ON j.id = r.job_id WHERE r.id = $1`, id).Scan(&jobID, &jobState); err != nil {
		t.Fatal(err)
	}
	if row := e.run(id); row.State != "running" || jobState != "running" {
		t.Fatalf("after the crash: run %s, job %s; want both running", row.State, jobState)
	}
	if _, err := e.docker.ContainerInspect(ctx, orphan); err != nil {
		t.Fatalf("the crashed process's sandbox should still be there: %v", err)
	}
	// 3. The restart: the orphan is removed before any work is taken.
	e.start()
	if _, err := e.docker.ContainerInspect(ctx, orphan); !cerrdefs.IsNotFound(err) {
		t.Errorf("the orphan sandbox %s survived the restart (inspect: %v)", orphan[:12], err)
	}

	// 4. The retry finishes the run.
	row := e.waitState(id, svcRunWait, "succeeded")
	if row.Attempts != 2 || row.ExitReason != "agent" || row.Steps != 5 {
		t.Errorf("run = attempts %d exit %q steps %d; want 2, agent, 5", row.Attempts, row.ExitReason, row.Steps)
	}
	prs := e.gh.PRs(e.repo)
	if len(prs) != 1 || !prs[0].Draft || prs[0].Head != svcBranch {
		t.Fatalf("PRs = %+v, want exactly one draft on %s", prs, svcBranch)
	}
	if head := e.gh.Branch(e.repo, svcBranch); head == nil || !strings.Contains(head.Files["stats/basic.py"], "return total(xs) / len(xs)\n") {
		t.Errorf("the branch does not hold the fix")
	}
	svcWait(t, 30*time.Second, "the status comment to link the PR", func() (bool, string) {
		c := e.onlyComment() // the first attempt's comment, reused
		return strings.Contains(c.Body, prs[0].HTMLURL), c.Body
	})
	c := e.onlyComment()
	if !strings.Contains(strings.Join(c.History, "\n"), "Starting attempt 2 of 3.") {
		t.Errorf("the status comment never said the run was retried: %q", c.History)
	}
	if n := len(e.model.Requests()); n != 6 {
		t.Errorf("%d model requests, want 1 + 5", n)
	}
	e.waitNoContainers(30 * time.Second)
	for _, tok := range e.gh.IssuedTokens() {
		if strings.Contains(childLog.String(), tok) {
			t.Error("the crashed process logged an installation token")
		}
	}
	// The crashed attempt's host clone was removed at the restart (the log says so), and the
	// second attempt removes its own when its job returns.
	if !strings.Contains(e.logs.String(), `"msg":"removed clones left by an earlier process","count":1`) {
		t.Error("the restarted service did not remove the crashed attempt's clone")
	}
	svcWait(t, 30*time.Second, "no host clone left in the work dir", func() (bool, string) {
		stale, _ := filepath.Glob(filepath.Join(e.env["FROGNANO_WORK_DIR"], "*", "frognano-run-*"))
		return len(stale) == 0, fmt.Sprint(stale)
	})
}

// svcChild starts the frognano binary bin with args, with exactly env plus PATH, HOME, TMPDIR
// and DOCKER_HOST from this process (what it needs to find git and the engine), its stdout
// going to stdout; it returns the process and its stderr, which the caller must read.
func svcChild(t *testing.T, bin string, env map[string]string, stdout io.Writer, args ...string) (*exec.Cmd, io.Reader) {
	t.Helper()
	child := exec.Command(bin, args...)
	for k, v := range env {
		child.Env = append(child.Env, k+"="+v)
	}
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "DOCKER_HOST"} {
		if v, ok := os.LookupEnv(k); ok {
			child.Env = append(child.Env, k+"="+v)
		}
	}
	stderr, err := child.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stdout = stdout
	if err := child.Start(); err != nil {
		t.Fatalf("starting frognano %s: %v", args[0], err)
	}
	return child, stderr
}

// svcChildAddr reads the child's JSON log until it says where it listens, copying every line
// into log; the rest of the stream keeps being copied in the background.
func svcChildAddr(t *testing.T, stderr io.Reader, log *svcBuffer) string {
	t.Helper()
	addrs := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Bytes()
			log.Write(append(line, '\n'))
			var rec struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if !sent && json.Unmarshal(line, &rec) == nil && rec.Msg == "frognano serving" {
				addrs <- rec.Addr
				sent = true
			}
		}
		close(addrs)
	}()
	select {
	case a, ok := <-addrs:
		if !ok {
			t.Fatalf("frognano serve ended before listening:\n%s", log.String())
		}
		return a
	case <-time.After(2 * time.Minute):
		t.Fatalf("frognano serve did not listen within 2 minutes:\n%s", log.String())
	}
	return ""
}

// TestServiceResumesARunAfterAShutdown stops the service the orderly way (SIGTERM: its context
// ends) while the agent sleeps: the soft stop runs out, the run goes back to queued, the
// sandbox is removed and the status comment says so; the next service finishes the run.
func TestServiceResumesARunAfterAShutdown(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-crash.json")
	first := e.start()
	id := e.deliver(first, "labeled", "frognano", svcMaintainer).RunIDs[0]
	e.waitAgentContainer(id)
	svcWait(t, time.Minute, "the first attempt's model turn", func() (bool, string) {
		n := len(e.model.Requests())
		return n == 1, fmt.Sprintf("%d requests", n)
	})

	if err := first.stop(); err != nil {
		t.Fatalf("stopping the service: %v", err)
	}
	// Everything below was done by the stopping service, before its run returned.
	if list := e.containers(0, ""); len(list) != 0 {
		t.Errorf("%d sandbox(es) outlived the shutdown", len(list))
	}
	if row := e.run(id); row.State != "queued" {
		t.Errorf("after the shutdown the run is %s, want queued", row.State)
	}
	if c := e.onlyComment(); !strings.Contains(c.Body, "will resume") {
		t.Errorf("status comment after the shutdown = %q", c.Body)
	}

	e.start()
	row := e.waitState(id, svcRunWait, "succeeded")
	if row.Attempts != 2 || row.Steps != 5 {
		t.Errorf("run = attempts %d steps %d; want 2, 5", row.Attempts, row.Steps)
	}
	if prs := e.gh.PRs(e.repo); len(prs) != 1 {
		t.Fatalf("%d PRs, want 1", len(prs))
	}
	e.waitNoContainers(30 * time.Second)
}
