package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/frognano/frognano/internal/hoststest"
	"github.com/frognano/frognano/migrations/dbtest"
	"github.com/frognano/frognano/runner/sandbox"
)

// hostsProc is one real frognano process (serve or worker) with its own owner and work folder.
type hostsProc struct {
	cmd   *exec.Cmd
	owner string
	log   *svcBuffer
	addr  string
	dead  bool
}

// TestSeveralHosts runs one `frognano serve --workers 0` and two `frognano worker` processes
// with distinct owners, work folders and the same PostgreSQL and engine, as separate hosts
// would. 20 issues on two installations (FROGNANO_PER_INSTALLATION=1) are queued; the worker
// holding the first run is killed (SIGKILL) while its model turn is pending, then started
// again. Every run finishes exactly once (one attempt each, two for the killed one; one status
// comment per issue), no sandbox or clone is left, and no installation ever has two runs
// running at once across both workers.
func TestSeveralHosts(t *testing.T) {
	t.Parallel()
	svcProcessCanaries()
	docker := svcDocker(t)
	_, bin := svcBinaries(t, true)
	executor, _ := svcBinaries(t, false)
	db := dbtest.NewEmpty(t)
	var schema string
	if err := db.QueryRow(context.Background(), `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	sc := hoststest.New(t, svcMaintainer, "several hosts: one slow turn, then quick final answers")
	base := sc.Env(map[string]string{
		"DATABASE_URL":       svcDatabaseURL(t, schema),
		"GITHUB_URL":         sc.GitHub.URL,
		"FROGNANO_MODEL_URL": sc.Model.URL,
		"FROGNANO_EXECUTOR":  executor,
		"FROGNANO_LOG_LEVEL": "debug",
	})
	suffix := svcRandom(t)
	workDirs := map[string]string{}
	start := func(owner string, args ...string) *hostsProc {
		t.Helper()
		env := map[string]string{}
		for k, v := range base {
			env[k] = v
		}
		env["FROGNANO_SANDBOX_OWNER"] = owner
		if _, ok := workDirs[owner]; !ok {
			workDirs[owner] = t.TempDir()
		}
		env["FROGNANO_WORK_DIR"] = workDirs[owner]
		if args[0] == "serve" {
			env["FROGNANO_ADDR"] = "127.0.0.1:0"
		}
		p := &hostsProc{owner: owner, log: &svcBuffer{}}
		cmd, stderr := svcChild(t, bin, env, p.log, append(args, "--test-cmd", "none")...)
		p.cmd = cmd
		t.Cleanup(func() {
			if !p.dead {
				_ = p.cmd.Process.Signal(os.Interrupt)
				done := make(chan struct{})
				go func() { _ = p.cmd.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(time.Minute):
					_ = p.cmd.Process.Kill()
				}
			}
			if t.Failed() {
				t.Logf("log of %s (%s):\n%s", owner, args[0], svcTail(p.log.String(), 6000))
			}
		})
		if args[0] == "serve" {
			p.addr = svcChildAddr(t, stderr, p.log)
		} else {
			go func() { _, _ = io.Copy(p.log, stderr) }()
		}
		return p
	}
	web := start("web-"+suffix, "serve", "--workers", "0")
	workers := map[string]*hostsProc{}
	for _, name := range []string{"w1-" + suffix, "w2-" + suffix} {
		workers[name] = start(name, "worker")
	}

	sampler := hoststest.Sample(t, db)
	sc.DeliverAll(t, web.addr)

	// The first model request waits: kill the worker whose agent sandbox is up, then start it
	// again with the same owner, which takes its run back at once.
	sc.WaitSlowTurn(t, 2*time.Minute)
	var victim *hostsProc
	svcWait(t, 50*time.Second, "the agent sandbox of the slow turn", func() (bool, string) {
		for name, w := range workers {
			f := filters.NewArgs(filters.Arg("label", sandbox.LabelOwner+"="+name), filters.Arg("label", sandbox.LabelPurpose+"=agent"))
			cs, err := docker.ContainerList(context.Background(), container.ListOptions{Filters: f})
			if err != nil {
				continue
			}
			// Quick runs come and go within a second or two; the slow turn's sandbox is the one
			// that has stayed up (it was made before the first model request).
			for _, c := range cs {
				if time.Since(time.Unix(c.Created, 0)) > 8*time.Second {
					victim = w
					return true, ""
				}
			}
		}
		return false, "no agent sandbox up for 8 s while the slow turn is pending"
	})
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	held := hoststest.Held(t, db, victim.owner)
	_ = victim.cmd.Wait()
	victim.dead = true
	workers[victim.owner] = start(victim.owner, "worker")

	sc.CheckAllRunsOnce(t, db, sampler, held, 3*time.Minute)

	// Nothing is left: no sandbox of any worker, no clone.
	var owners []string
	for name := range workers {
		owners = append(owners, name)
	}
	hoststest.NothingLeft(t, owners, func(owner string) (bool, string) {
		f := filters.NewArgs(filters.Arg("label", sandbox.LabelOwner+"="+owner))
		cs, err := docker.ContainerList(context.Background(), container.ListOptions{All: true, Filters: f})
		return err == nil && len(cs) == 0, fmt.Sprintf("%d containers (%v)", len(cs), err)
	}, func(owner string) (bool, string) {
		entries, _ := os.ReadDir(filepath.Join(workDirs[owner], "frognano-"+owner))
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return len(names) == 0, fmt.Sprint(names)
	})
}
