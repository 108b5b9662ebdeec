package runtest

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/run"
)

// FakeGitHub is NewWithGitHub's GitHub: githubtest's server behind the real githubapp client,
// so that every answer a run gets is GitHub's own, read and worded by the code that runs in
// production.
type FakeGitHub struct {
	Server *githubtest.Server
	// Repo is octo/pager (with pager.go) in installation 5; its issue 7 ("Pager skips the last
	// page") is labelled frognano, and maintainer may write.
	Repo *githubtest.Repo
	App  *githubapp.App
}

// GitHubOptions says how NewWithGitHub's App is configured.
type GitHubOptions struct {
	// Audit: the App records every write of a run in its audit trail (Store.RecordAudit), as
	// the service's does.
	Audit bool
	// ChecksWrite: the operator wants check runs (FROGNANO_CHECK_RUNS).
	ChecksWrite bool
}

// NewWithGitHub is New whose runs work on the fake GitHub server (Pipeline.GitHub, made by
// NewFakeGitHub on the pipeline's schema) through the real githubapp client. Requests name
// its repository by default.
func NewWithGitHub(t testing.TB, o GitHubOptions) *Pipeline {
	t.Helper()
	p := newPipeline(t)
	p.GitHub = NewFakeGitHub(t, p.Pool, o)
	p.Config.GitHub = run.GitHubApp(p.GitHub.App)
	p.repoID = p.GitHub.Repo.ID
	return p
}

// NewFakeGitHub starts githubtest's server with the repository octo/pager in installation 5
// (FakeGitHub.Repo) and makes the App that talks to it; with o.Audit the App records its writes
// in pool's audit trail. The App's write spacing and rate-limit waits pass at once (the tests
// observe answers, not time).
func NewFakeGitHub(t testing.TB, pool *pgxpool.Pool, o GitHubOptions) *FakeGitHub {
	t.Helper()
	gh := githubtest.New(t)
	hub := gh.AddRepo(Owner, RepoName, map[string]string{"pager.go": "a\n"})
	gh.AddInstallation(Installation, hub)
	gh.AddIssue(hub, 7, "Pager skips the last page", "Steps: open page 3.")
	gh.AddLabel(hub, 7, Label)
	gh.SetPermission(hub, "maintainer", "write")
	cfg := githubapp.Config{AppID: gh.AppID, PrivateKey: gh.PrivateKey, URL: gh.URL, Logger: slog.New(slog.DiscardHandler),
		ChecksWrite: o.ChecksWrite, Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }}
	if o.Audit {
		cfg.Audit = run.NewStore(pool, nil).RecordAudit
	}
	app, err := githubapp.New(cfg)
	if err != nil {
		t.Fatalf("runtest: the App on the fake GitHub: %v", err)
	}
	return &FakeGitHub{Server: gh, Repo: hub, App: app}
}

var (
	runMarker = regexp.MustCompile(`frognano:run:\d+ -->|frognano run \d+ `)
	commitID  = regexp.MustCompile(`\b[0-9a-f]{40}\b`) // a commit's id holds its time
)

// Normalize replaces what changes from one test run to the next in a text GitHub shows: the
// fake's address, commit ids and the run's id; for golden files.
func (g *FakeGitHub) Normalize(s string) string {
	s = strings.ReplaceAll(s, g.Server.URL, "https://github.example")
	s = commitID.ReplaceAllString(s, "COMMIT")
	return runMarker.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(m, "frognano:run:") {
			return "frognano:run:N -->"
		}
		return "frognano run N "
	})
}

// OnlyComment is the one comment on issue (or pull request) n: the run's status comment; the
// test fails when there is none or more.
func (g *FakeGitHub) OnlyComment(t testing.TB, n int) githubtest.Comment {
	t.Helper()
	cs := g.Server.Comments(g.Repo, n)
	if len(cs) != 1 {
		t.Fatalf("%d comments on #%d, want the status comment alone: %+v", len(cs), n, cs)
	}
	return cs[0]
}

// AuditRow is a row of run_audit, whichever run it belongs to.
type AuditRow struct {
	RunID                                   int64
	Action, Method, Path, Outcome, Detail   string
	Status                                  int
	ObjectID, ObjectSHA, ObjectURL, Request string
}

// RequireEveryWriteAudited reads the whole audit trail (every run's) in pool and checks it
// against the writes gh received on its API, but the App's own token requests (no run's):
// each write GitHub answered is in the trail, under runs as many times as it was made on
// behalf of runs, with GitHub's status and request id, and the trail holds nothing else. It
// returns the rows.
func RequireEveryWriteAudited(t testing.TB, gh *githubtest.Server, pool *pgxpool.Pool) []AuditRow {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT run_id, action, method, path, outcome, detail, status, object_id, object_sha,
		object_url, request_id FROM run_audit ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	trail, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (AuditRow, error) {
		var a AuditRow
		return a, r.Scan(&a.RunID, &a.Action, &a.Method, &a.Path, &a.Outcome, &a.Detail, &a.Status, &a.ObjectID, &a.ObjectSHA, &a.ObjectURL, &a.Request)
	})
	if err != nil {
		t.Fatal(err)
	}
	byRequest := map[string][]AuditRow{}
	for _, e := range trail {
		if e.Request == "" {
			t.Errorf("an entry without GitHub's request id in a trail where every write was answered: %+v", e)
		}
		byRequest[e.Request] = append(byRequest[e.Request], e)
	}
	writes := 0
	for _, q := range gh.Requests() {
		write := q.Method == "POST" || q.Method == "PATCH" || q.Method == "PUT" || q.Method == "DELETE"
		if !write || q.RequestID == "" || strings.HasSuffix(q.Path, "/access_tokens") {
			continue
		}
		writes++
		es, ok := byRequest[q.RequestID]
		if !ok {
			t.Errorf("write %s %s (request %s, answered %d) is not in the audit trail", q.Method, q.Path, q.RequestID, q.Status)
			continue
		}
		runs := map[int64]bool{}
		for _, e := range es {
			if e.Method != q.Method || !strings.HasSuffix(q.Path, e.Path) || e.Status != q.Status {
				t.Errorf("request %s: recorded %s %s %d, GitHub got %s %s and answered %d", q.RequestID, e.Method, e.Path, e.Status, q.Method, q.Path, q.Status)
			}
			if runs[e.RunID] {
				t.Errorf("request %s recorded twice for run %d", q.RequestID, e.RunID)
			}
			runs[e.RunID] = true
			want := githubapp.OutcomeDone
			if q.Status >= 300 {
				want = githubapp.OutcomeRefused
			}
			if e.Outcome != want {
				t.Errorf("request %s answered %d: outcome %q, want %q", q.RequestID, q.Status, e.Outcome, want)
			}
		}
	}
	if writes != len(byRequest) {
		t.Errorf("%d writes on GitHub, %d in the audit trail", writes, len(byRequest))
	}
	return trail
}

// RequireNoSecretInTheAudit checks every column of every row of run_audit in pool against the
// tokens gh issued, the texts (issue, comments, pull request body) given, and the prefixes of
// tokens.
func RequireNoSecretInTheAudit(t testing.TB, gh *githubtest.Server, pool *pgxpool.Pool, texts ...string) {
	t.Helper()
	secrets := append(gh.IssuedTokens(), texts...)
	rows, err := pool.Query(context.Background(), `SELECT row_to_json(a)::text FROM run_audit a`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if s != "" && strings.Contains(raw, s) {
				t.Errorf("audit row holds %q: %s", s, raw)
			}
		}
		for _, s := range []string{"ghs_", "Bearer", "token"} {
			if strings.Contains(raw, s) {
				t.Errorf("audit row holds %q: %s", s, raw)
			}
		}
	}
}
