package githubapp

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/frognano/frognano/githubapp/githubtest"
)

const (
	testInstallation = 77
	testOwner        = "octo-org"
	testRepo         = "hello"
)

// clock is a fake clock that moves only when the code under test sleeps, so waits are observed
// exactly and the test never waits.
type clock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newClock() *clock { return &clock{now: time.Now()} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return nil
}

func (c *clock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// syncBuffer collects log output written from several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type bundle struct {
	gh     *githubtest.Server
	repo   *githubtest.Repo
	app    *App
	client *Client
	clock  *clock
	logs   *syncBuffer
}

var testFiles = map[string]string{
	"README.md":   "# hello\n",
	"calc/add.go": "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
}

// setup starts a fake GitHub with one installed repository, and an App and Client for it.
func setup(t *testing.T, edit ...func(*Config)) *bundle {
	t.Helper()
	gh := githubtest.New(t)
	repo := gh.AddRepo(testOwner, testRepo, testFiles)
	gh.AddInstallation(testInstallation, repo)
	gh.AddIssue(repo, 12, "Add subtracts", "calc.Add returns a-b.")
	b := &bundle{gh: gh, repo: repo, clock: newClock(), logs: &syncBuffer{}}
	cfg := Config{
		AppID: gh.AppID, PrivateKey: gh.PrivateKey, URL: gh.URL,
		Logger: slog.New(slog.NewTextHandler(b.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:    b.clock.Now, Sleep: b.clock.Sleep,
	}
	for _, e := range edit {
		e(&cfg)
	}
	app, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	b.app = app
	b.client, err = app.ForRepo(context.Background(), testInstallation, testOwner, testRepo)
	if err != nil {
		t.Fatalf("ForRepo: %v", err)
	}
	t.Cleanup(func() {
		logs := b.logs.String()
		for _, tok := range gh.IssuedTokens() {
			if bytes.Contains([]byte(logs), []byte(tok)) {
				t.Errorf("an installation token appears in the logs")
			}
		}
	})
	return b
}
