package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/migrations/dbtest"
	"github.com/frognano/frognano/runner/leaf/leaftest"
	"github.com/frognano/frognano/runner/sandbox"
)

// hostsRuns is how many issues the several-hosts test queues: half on each of two installations.
const hostsRuns = 20

// hostsScript: the first request waits (the worker holding it is killed meanwhile); every
// other answers at once without a tool call, so each run is one sandbox and one model turn.
func hostsScript() leaftest.Script {
	s := leaftest.Script{Description: "several hosts: one slow turn, then quick final answers", AllowUnused: true}
	s.Turns = append(s.Turns, leaftest.Turn{Content: "slow", Delay: "90s"})
	for i := 0; i < hostsRuns+2; i++ {
		s.Turns = append(s.Turns, leaftest.Turn{Content: "I found no fix for this issue."})
	}
	return s
}

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
	gh := githubtest.New(t)
	files := map[string]string{"README.md": "a repository with nothing to fix\n", "main.py": "print('hi')\n"}
	repos := []*githubtest.Repo{gh.AddRepo("octo-org", "alpha", files), gh.AddRepo("other-org", "beta", files)}
	for i, r := range repos {
		gh.AddInstallation(int64(41000+i), r)
		gh.SetPermission(r, svcMaintainer, "write")
		for n := 1; n <= hostsRuns/len(repos); n++ {
			gh.AddIssue(r, n, fmt.Sprintf("issue %d of %s", n, r.Name), "Please look.")
			gh.AddLabel(r, n, "frognano")
		}
	}
	model := leaftest.NewServer(t, hostsScript())
	secret := "webhook-secret-" + svcRandom(t)
	base := map[string]string{
		"DATABASE_URL":                   svcDatabaseURL(t, schema),
		"GITHUB_WEBHOOK_SECRET":          secret,
		"GITHUB_APP_ID":                  fmt.Sprint(gh.AppID),
		"GITHUB_APP_PRIVATE_KEY":         string(gh.PrivateKey),
		"GITHUB_URL":                     gh.URL,
		"FROGNANO_MODEL_URL":             model.URL,
		"FROGNANO_EXECUTOR":              executor,
		"FROGNANO_SANDBOX_MEMORY":        "512m",
		"FROGNANO_SANDBOX_CPUS":          "1",
		"FROGNANO_PER_INSTALLATION":      "1",
		"FROGNANO_WORKERS":               "2",
		"FROGNANO_BUSY_SNOOZE":           "1s",
		"FROGNANO_SOFT_STOP_TIMEOUT":     "2s",
		"FROGNANO_SHUTDOWN_TIMEOUT":      "5s",
		"FROGNANO_SANDBOX_REAP_INTERVAL": "2s",
		"FROGNANO_LOG_LEVEL":             "debug",
	}
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
		p.cmd = exec.Command(bin, append(args, "--test-cmd", "none")...)
		for k, v := range env {
			p.cmd.Env = append(p.cmd.Env, k+"="+v)
		}
		for _, k := range []string{"PATH", "HOME", "TMPDIR", "DOCKER_HOST"} {
			if v, ok := os.LookupEnv(k); ok {
				p.cmd.Env = append(p.cmd.Env, k+"="+v)
			}
		}
		stderr, err := p.cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		p.cmd.Stdout = p.log
		if err := p.cmd.Start(); err != nil {
			t.Fatalf("starting frognano %s: %v", args[0], err)
		}
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

	// Sample the running runs per installation while everything happens.
	stopSampling := make(chan struct{})
	var maxRunning int
	var sampling sync.WaitGroup
	sampling.Add(1)
	go func() {
		defer sampling.Done()
		for {
			select {
			case <-stopSampling:
				return
			case <-time.After(100 * time.Millisecond):
			}
			var n int
			if err := db.QueryRow(context.Background(), `SELECT coalesce(max(c), 0) FROM
				(SELECT count(*) AS c FROM runs WHERE state = 'running' GROUP BY installation_id) x`).Scan(&n); err == nil && n > maxRunning {
				maxRunning = n
			}
		}
	}()

	for i := 0; i < hostsRuns; i++ {
		r := repos[i%len(repos)]
		hostsDeliver(t, web.addr, secret, r, int64(41000+i%len(repos)), i/len(repos)+1)
	}

	// The first model request waits: kill the worker whose agent sandbox is up, then start it
	// again with the same owner, which takes its run back at once.
	svcWait(t, 2*time.Minute, "the slow first model turn", func() (bool, string) {
		n := len(model.Requests())
		return n >= 1, fmt.Sprintf("%d requests", n)
	})
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
	// The runs the victim holds: their jobs' latest attempt is by a client of its owner, and the
	// run has begun an attempt (a job fetched a moment before the kill may not have).
	held := map[int64]bool{}
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	heldRows, err := db.Query(context.Background(), `SELECT r.id FROM runs r JOIN river_job j ON j.id = r.job_id
		WHERE j.state = 'running' AND r.state = 'running' AND r.attempts >= 1
		AND left(j.attempted_by[cardinality(j.attempted_by)], length($1) + 1) = $1 || '/'`, victim.owner)
	if err != nil {
		t.Fatal(err)
	}
	for heldRows.Next() {
		var id int64
		_ = heldRows.Scan(&id)
		held[id] = true
	}
	heldRows.Close()
	if len(held) == 0 {
		t.Fatalf("the killed worker held no run")
	}
	_ = victim.cmd.Wait()
	victim.dead = true
	workers[victim.owner] = start(victim.owner, "worker")

	// Every run ends once.
	var states map[string]int
	svcWait(t, 3*time.Minute, "all runs finished", func() (bool, string) {
		states = map[string]int{}
		rows, err := db.Query(context.Background(), `SELECT state, count(*) FROM runs GROUP BY 1`)
		if err != nil {
			return false, err.Error()
		}
		defer rows.Close()
		total, open := 0, 0
		for rows.Next() {
			var s string
			var n int
			_ = rows.Scan(&s, &n)
			states[s] = n
			total += n
			if s == "queued" || s == "running" {
				open += n
			}
		}
		return total == hostsRuns && open == 0, fmt.Sprint(states)
	})
	close(stopSampling)
	sampling.Wait()
	if maxRunning > 1 {
		t.Errorf("an installation had %d runs running at once across the workers, limit 1", maxRunning)
	}
	if states["cancelled"]+states["skipped"] > 0 || states["succeeded"]+states["failed"] != hostsRuns {
		t.Errorf("final states %v", states)
	}
	svcWait(t, 30*time.Second, "every River job completed", func() (bool, string) {
		var n int
		err := db.QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = 'frognano_run' AND state = 'completed'`).Scan(&n)
		return err == nil && n == hostsRuns, fmt.Sprintf("%d completed (%v)", n, err)
	})
	rows, err := db.Query(context.Background(), `SELECT id, owner, repo, issue, attempts FROM runs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var owner, repo string
		var issue, attempts int
		if err := rows.Scan(&id, &owner, &repo, &issue, &attempts); err != nil {
			t.Fatal(err)
		}
		want := 1
		if held[id] {
			want = 2 // the killed attempt counts, as after River's rescuer
		}
		if attempts != want {
			t.Errorf("%s/%s#%d took %d attempts, want %d", owner, repo, issue, attempts, want)
		}
	}
	rows.Close()
	for _, r := range repos {
		for n := 1; n <= hostsRuns/len(repos); n++ {
			if cs := gh.Comments(r, n); len(cs) != 1 {
				t.Errorf("%s#%d has %d comments, want one status comment", r.FullName(), n, len(cs))
			}
		}
	}

	// Nothing is left: no sandbox of any worker, no clone.
	for name := range workers {
		name := name
		svcWait(t, 30*time.Second, "no sandbox of "+name, func() (bool, string) {
			f := filters.NewArgs(filters.Arg("label", sandbox.LabelOwner+"="+name))
			cs, err := docker.ContainerList(context.Background(), container.ListOptions{All: true, Filters: f})
			return err == nil && len(cs) == 0, fmt.Sprintf("%d containers (%v)", len(cs), err)
		})
		// The clone is removed right after the run's final state is written: wait for it.
		svcWait(t, 30*time.Second, "no clone of "+name, func() (bool, string) {
			entries, _ := os.ReadDir(filepath.Join(workDirs[name], "frognano-"+name))
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			return len(names) == 0, fmt.Sprint(names)
		})
	}
}

// hostsDeliver POSTs a signed issues.labeled delivery for issue n of repo r.
func hostsDeliver(t *testing.T, addr, secret string, r *githubtest.Repo, installation int64, n int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "server", "testdata", "github-webhooks", "issues", "labeled.payload.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	p["installation"] = map[string]any{"id": installation}
	repo := p["repository"].(map[string]any)
	repo["id"], repo["name"], repo["full_name"] = r.ID, r.Name, r.FullName()
	repo["owner"].(map[string]any)["login"] = r.Owner
	issue := p["issue"].(map[string]any)
	issue["number"] = n
	p["label"].(map[string]any)["name"] = "frognano"
	p["sender"].(map[string]any)["login"] = svcMaintainer
	body, _ := json.Marshal(p)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "issues")
	req.Header.Set("X-GitHub-Delivery", svcRandom(t)+"-delivery")
	req.Header.Set("X-GitHub-Hook-Installation-Target-Type", "integration")
	req.Header.Set("X-GitHub-Hook-Installation-Target-ID", fmt.Sprint(installation))
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"queued"`) {
		t.Fatalf("delivery for %s#%d: %d %s", r.FullName(), n, resp.StatusCode, b)
	}
}
