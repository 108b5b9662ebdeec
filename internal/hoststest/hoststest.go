// Package hoststest owns the several-hosts scenario that TestSeveralHosts (cmd/frognano, real
// processes) and TestSeveralHostsInContainers (deploy/compose, containers) both run: 20 issues
// on two installations with a per-installation limit of 1, a scripted model whose first turn is
// slow, signed issues.labeled deliveries, and the checks that every run finished exactly once,
// that the limit held and that each issue got one status comment. How the hosts are started,
// which worker is killed and how leftovers are looked for stay with each test.
//
// It is imported only from _test.go files: nothing in frognano's programs may depend on it.
package hoststest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// Runs is how many issues the scenario queues: half on each of two installations.
const Runs = 20

// firstInstallation is the id of the first repository's installation; the second's is one more.
const firstInstallation = 41000

// Scenario is the fake GitHub (two repositories, ten labelled issues each, Maintainer a writer
// of both), the scripted model and the webhook secret of one several-hosts test.
type Scenario struct {
	GitHub     *githubtest.Server
	Repos      []*githubtest.Repo
	Model      *leaftest.Server
	Secret     string
	Maintainer string // labels every issue
}

// New sets the scenario up. description names the model script (it shows in its errors).
func New(t *testing.T, maintainer, description string) *Scenario {
	t.Helper()
	gh := githubtest.New(t)
	files := map[string]string{"README.md": "a repository with nothing to fix\n", "main.py": "print('hi')\n"}
	repos := []*githubtest.Repo{gh.AddRepo("octo-org", "alpha", files), gh.AddRepo("other-org", "beta", files)}
	for i, r := range repos {
		gh.AddInstallation(int64(firstInstallation+i), r)
		gh.SetPermission(r, maintainer, "write")
		for n := 1; n <= Runs/len(repos); n++ {
			gh.AddIssue(r, n, fmt.Sprintf("issue %d of %s", n, r.Name), "Please look.")
			gh.AddLabel(r, n, "frognano")
		}
	}
	return &Scenario{
		GitHub:     gh,
		Repos:      repos,
		Model:      leaftest.NewServer(t, script(description)),
		Secret:     "webhook-secret-" + randomHex(t, 8),
		Maintainer: maintainer,
	}
}

// script: the first request waits (the worker holding it is killed meanwhile); every other
// answers at once without a tool call, so each run is one sandbox and one model turn.
func script(description string) leaftest.Script {
	s := leaftest.Script{Description: description, AllowUnused: true}
	s.Turns = append(s.Turns, leaftest.Turn{Content: "slow", Delay: "90s"})
	for i := 0; i < Runs+2; i++ {
		s.Turns = append(s.Turns, leaftest.Turn{Content: "I found no fix for this issue."})
	}
	return s
}

// Env is the environment every frognano process of the scenario shares, with extra added:
// extra carries what depends on how the hosts reach things (DATABASE_URL, GITHUB_URL,
// FROGNANO_MODEL_URL, ...).
func (s *Scenario) Env(extra map[string]string) map[string]string {
	env := map[string]string{
		"GITHUB_WEBHOOK_SECRET":          s.Secret,
		"GITHUB_APP_ID":                  fmt.Sprint(s.GitHub.AppID),
		"GITHUB_APP_PRIVATE_KEY":         string(s.GitHub.PrivateKey),
		"FROGNANO_SANDBOX_MEMORY":        "512m",
		"FROGNANO_SANDBOX_CPUS":          "1",
		"FROGNANO_PER_INSTALLATION":      "1",
		"FROGNANO_WORKERS":               "2",
		"FROGNANO_SOFT_STOP_TIMEOUT":     "2s",
		"FROGNANO_SHUTDOWN_TIMEOUT":      "5s",
		"FROGNANO_SANDBOX_REAP_INTERVAL": "2s",
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// DeliverAll POSTs the Runs signed issues.labeled deliveries (octokit's example) to serve at
// addr (host:port), alternating between the two repositories, and fails the test unless each
// is queued.
func (s *Scenario) DeliverAll(t *testing.T, addr string) {
	t.Helper()
	for i := 0; i < Runs; i++ {
		r, installation, n := s.Repos[i%len(s.Repos)], int64(firstInstallation+i%len(s.Repos)), i/len(s.Repos)+1
		p := githubtest.Webhook(t, "issues/labeled.payload.json")
		p["installation"] = map[string]any{"id": installation}
		repo := p["repository"].(map[string]any)
		repo["id"], repo["name"], repo["full_name"] = r.ID, r.Name, r.FullName()
		repo["owner"].(map[string]any)["login"] = r.Owner
		p["issue"].(map[string]any)["number"] = n
		p["label"].(map[string]any)["name"] = "frognano"
		p["sender"].(map[string]any)["login"] = s.Maintainer
		status, b := githubtest.Deliver(t, "http://"+addr+"/webhook", s.Secret, "issues", p)
		if status != http.StatusOK || !strings.Contains(string(b), `"queued"`) {
			t.Fatalf("delivery for %s#%d: %d %s", r.FullName(), n, status, b)
		}
	}
}

// WaitSlowTurn waits until the model has been asked for the slow first turn.
func (s *Scenario) WaitSlowTurn(t *testing.T, timeout time.Duration) {
	t.Helper()
	Wait(t, timeout, "the slow first model turn", func() (bool, string) {
		n := len(s.Model.Requests())
		return n >= 1, fmt.Sprintf("%d requests", n)
	})
}

// Sampler records the most runs running at once for one installation while the scenario runs.
type Sampler struct {
	stop    chan struct{}
	once    sync.Once
	done    sync.WaitGroup
	maxSeen int
}

// Sample starts sampling db's runs until Stop, or the end of the test.
func Sample(t *testing.T, db *pgxpool.Pool) *Sampler {
	s := &Sampler{stop: make(chan struct{})}
	t.Cleanup(func() { s.Stop() })
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		for {
			select {
			case <-s.stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			var n int
			if err := db.QueryRow(context.Background(), `SELECT coalesce(max(c), 0) FROM
				(SELECT count(*) AS c FROM runs WHERE state = 'running' GROUP BY installation_id) x`).Scan(&n); err == nil && n > s.maxSeen {
				s.maxSeen = n
			}
		}
	}()
	return s
}

// Stop ends the sampling and returns the most runs one installation had running at once.
func (s *Sampler) Stop() int {
	s.once.Do(func() { close(s.stop) })
	s.done.Wait()
	return s.maxSeen
}

// Held returns the runs a worker of owner held when it was killed: their jobs' latest attempt
// is by a client of its owner, and the run has begun an attempt (a job fetched a moment before
// the kill may not have). It fails the test when there is none.
func Held(t *testing.T, db *pgxpool.Pool, owner string) map[int64]bool {
	t.Helper()
	held := map[int64]bool{}
	rows, err := db.Query(context.Background(), `SELECT r.id FROM runs r JOIN river_job j ON j.id = r.job_id
		WHERE j.state = 'running' AND r.state = 'running' AND r.attempts >= 1
		AND left(j.attempted_by[cardinality(j.attempted_by)], length($1) + 1) = $1 || '/'`, owner)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		held[id] = true
	}
	if len(held) == 0 {
		t.Fatalf("the killed worker held no run")
	}
	return held
}

// CheckAllRunsOnce waits up to timeout for every run to end, stops sampler, and checks that
// the per-installation limit of 1 held, that every run succeeded or failed (none cancelled or
// skipped), that every run's River job completed, that each run took one attempt (two for the held
// ones: the killed attempt counts, as after River's rescuer) and that each issue has exactly
// one comment, its status comment.
func (s *Scenario) CheckAllRunsOnce(t *testing.T, db *pgxpool.Pool, sampler *Sampler, held map[int64]bool, timeout time.Duration) {
	t.Helper()
	var states map[string]int
	Wait(t, timeout, "all runs finished", func() (bool, string) {
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
		return total == Runs && open == 0, fmt.Sprint(states)
	})
	if maxRunning := sampler.Stop(); maxRunning > 1 {
		t.Errorf("an installation had %d runs running at once across the workers, limit 1", maxRunning)
	}
	if states["cancelled"]+states["skipped"] > 0 || states["succeeded"]+states["failed"] != Runs {
		t.Errorf("final states %v", states)
	}
	// A run parked behind its installation's limit ends its job and gets a new one when woken
	// (queue/parked.go): each run's current job completes, and no run job is left otherwise
	// than completed, or cancelled (the old job of a parked run woken before River recorded its
	// end).
	Wait(t, 30*time.Second, "every River job completed", func() (bool, string) {
		var current, left int
		err := db.QueryRow(context.Background(), `SELECT
				(SELECT count(*) FROM runs r JOIN river_job j ON j.id = r.job_id WHERE j.state = 'completed'),
				(SELECT count(*) FROM river_job WHERE kind = 'frognano_run' AND state NOT IN ('completed', 'cancelled'))`).Scan(&current, &left)
		return err == nil && current == Runs && left == 0, fmt.Sprintf("%d runs' jobs completed, %d run jobs left (%v)", current, left, err)
	})
	rows, err := db.Query(context.Background(), `SELECT id, owner, repo, issue, attempts FROM runs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var owner, repo string
		var issue, attempts int
		if err := rows.Scan(&id, &owner, &repo, &issue, &attempts); err != nil {
			t.Fatal(err)
		}
		want := 1
		if held[id] {
			want = 2
		}
		if attempts != want {
			t.Errorf("%s/%s#%d took %d attempts, want %d", owner, repo, issue, attempts, want)
		}
	}
	for _, r := range s.Repos {
		for n := 1; n <= Runs/len(s.Repos); n++ {
			if cs := s.GitHub.Comments(r, n); len(cs) != 1 {
				t.Errorf("%s#%d has %d comments, want one status comment", r.FullName(), n, len(cs))
			}
		}
	}
}

// NothingLeft waits, for each worker owner, until sandboxes(owner) and clones(owner) report
// nothing left (the clone is removed right after the run's final state is written). Each
// function returns whether nothing is left and what it saw.
func NothingLeft(t *testing.T, owners []string, sandboxes, clones func(owner string) (bool, string)) {
	t.Helper()
	for _, owner := range owners {
		Wait(t, 30*time.Second, "no sandbox of "+owner, func() (bool, string) { return sandboxes(owner) })
		Wait(t, 30*time.Second, "no clone of "+owner, func() (bool, string) { return clones(owner) })
	}
}

// Wait polls cond until it holds, failing the test after timeout with cond's last word.
func Wait(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting %s for %s: %s", timeout, what, why)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
