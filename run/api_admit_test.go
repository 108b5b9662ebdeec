package run_test

import (
	"context"
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
	"github.com/frognano/frognano/settings"
)

// TestAPIRunNeedsALiveToken: a run an API token asked for is admitted without asking GitHub
// for anyone's permission (a token is the operator's credential), only while its token is
// live; a token revoked after it asked, and a run that claims the API without a token, are
// skipped before anything is written on GitHub. The run says which token started it.
func TestAPIRunNeedsALiveToken(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		revoked bool
		noToken bool
		invalid bool // the repository's settings file is invalid
	}{
		{name: "Live"},
		{name: "RevokedAfterAsking", revoked: true},
		{name: "NoToken", noToken: true},
		// A revoked token's run does not even name the settings file's problems.
		{name: "RevokedInvalidSettings", revoked: true, invalid: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := runtest.New(t)
			ctx := context.Background()
			if c.invalid {
				p.Repo.Files = map[string]string{settings.Path: "colour: red\n"}
			}
			var tokenID int64
			if !c.noToken {
				if err := p.Pool.QueryRow(ctx, `INSERT INTO api_tokens (name, hash, repos) VALUES ('tracker', sha256('s'), '{acme/widgets}')
					RETURNING id`).Scan(&tokenID); err != nil {
					t.Fatal(err)
				}
			}
			id := p.Request(t, runtest.Request{Issue: 7, Labeler: run.TokenRequester("tracker"), Trigger: run.TriggerAPI, TokenID: tokenID})
			if c.revoked {
				if _, err := p.Pool.Exec(ctx, `UPDATE api_tokens SET revoked_at = now() WHERE id = $1`, tokenID); err != nil {
					t.Fatal(err)
				}
			}
			if r := p.Work(t, id, 1); !r.Completed() {
				t.Fatalf("Work: %v", r)
			}
			if asked := p.Repo.PermissionAsked(); len(asked) != 0 {
				t.Errorf("permission asked of %v: a token's run asks nobody's", asked)
			}
			row := p.Row(t, id)
			if c.revoked || c.noToken {
				if row.State != run.StateSkipped || row.ExitReason != "token" || len(p.Repo.Comments()) != 0 || p.Repo.Clones() != 0 {
					t.Errorf("run %+v, %d comments, %d clones: want skipped (token) with nothing written", row, len(p.Repo.Comments()), p.Repo.Clones())
				}
				return
			}
			if row.State != run.StateSucceeded {
				t.Fatalf("run %+v, want succeeded", row)
			}
			pubs := p.Repo.Publishes()
			if len(pubs) != 1 || pubs[0].CoAuthor.Login != "token:tracker" {
				t.Errorf("publishes %+v: want one, crediting the token's requester (no GitHub login)", pubs)
			}
			rec, err := p.Store.Run(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if by := run.StartedBy(rec); !strings.Contains(by, "API token tracker") || !strings.Contains(by, "id ") {
				t.Errorf("started by %q, want the token's name and id", by)
			}
		})
	}
}

// TestAPIRunTakesItsInstructionsAndOptions: an API run's instructions reach the task, fenced,
// under the token's name, and its base and attempts are the run's, as a mention's are.
func TestAPIRunTakesItsInstructionsAndOptions(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Runner.Ceiling = 3
	var tokenID int64
	if err := p.Pool.QueryRow(context.Background(), `INSERT INTO api_tokens (name, hash, repos) VALUES ('tracker', sha256('s'), '{acme/widgets}')
		RETURNING id`).Scan(&tokenID); err != nil {
		t.Fatal(err)
	}
	id := p.Request(t, runtest.Request{Issue: 7, Labeler: run.TokenRequester("tracker"), Trigger: run.TriggerAPI, TokenID: tokenID,
		Request: "keep the public API", Options: run.Options{Base: "dev", Attempts: 2}})
	if r := p.Work(t, id, 1); !r.Completed() {
		t.Fatalf("Work: %v", r)
	}
	specs := p.Runner.Specs()
	if len(specs) != 1 {
		t.Fatalf("%d agent runs", len(specs))
	}
	for _, want := range []string{"## The requester's instructions", run.TokenRequester("tracker") + " asked for this run and adds:", "```text\nkeep the public API\n```"} {
		if !strings.Contains(specs[0].Task, want) {
			t.Errorf("task lacks %q:\n%s", want, specs[0].Task)
		}
	}
	if specs[0].Attempts != 2 {
		t.Errorf("attempts %d, want 2", specs[0].Attempts)
	}
	if got := p.Repo.BranchClones(); len(got) != 1 || got[0] != "dev dev" {
		t.Errorf("branch clones %q, want dev", got)
	}
}
