package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/queue"
	runs "github.com/frognano/frognano/run"
	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// svcModelsFile names one more model server, "large", at url, and points the service at it.
func (e *svcEnv) svcModelsFile(url string) {
	e.t.Helper()
	file := filepath.Join(e.t.TempDir(), "models.yml")
	text := "models:\n  - name: large\n    url: " + url + "\n    model: large/coder\n    api_key_env: LARGE_MODEL_KEY\n    concurrency: 2\n"
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		e.t.Fatal(err)
	}
	e.env["FROGNANO_MODELS_FILE"] = file
	e.env["LARGE_MODEL_KEY"] = "large-model-key-" + svcRandom(e.t)
}

// askRun queues a run of the test's issue that asks for model, as a maintainer's mention does
// (queue.RunRequest's Options), through an insert-only queue client on the service's database.
func (e *svcEnv) askRun(model string) int64 {
	e.t.Helper()
	qc, err := queue.NewClient(e.db, queue.Config{})
	if err != nil {
		e.t.Fatal(err)
	}
	acc, err := qc.Accept(context.Background(), queue.Delivery{HookTarget: "test", ID: "ask-" + svcRandom(e.t), InstallationID: svcInstallationID},
		queue.RunRequest{InstallationID: svcInstallationID, RepoID: e.repo.ID, Owner: svcOwner, Repo: svcRepo, Issue: svcIssue,
			Labeler: svcMaintainer, Trigger: runs.TriggerMention, Options: runs.Options{Model: model}})
	if err != nil || acc.RunID == 0 {
		e.t.Fatalf("queueing a run that asks for %s: %+v, %v", model, acc, err)
	}
	return acc.RunID
}

// runModel is the run's runs.model ("" : NULL).
func (e *svcEnv) runModel(id int64) string {
	e.t.Helper()
	var m string
	if err := e.db.QueryRow(context.Background(), `SELECT coalesce(model, '') FROM runs WHERE id = $1`, id).Scan(&m); err != nil {
		e.t.Fatal(err)
	}
	return m
}

// TestServiceModelsByName: with a second model named in FROGNANO_MODELS_FILE, a run that asks
// for it is written by it alone (the default model, scripted with no turn, gets no request);
// the PR body and runs.model name it. A run that asks for a name the operator
// does not offer is skipped with one comment naming it and the names the repository may use.
func TestServiceModelsByName(t *testing.T) {
	t.Parallel()
	e := svcSetupScript(t, leaftest.Script{}) // the default model has no turn to give
	large := leaftest.NewServer(t, leaftest.LoadModel(t, "svc-pyaverage.json"))
	e.svcModelsFile(large.URL)
	e.start()

	id := e.askRun("large")
	r := e.waitState(id, svcRunWait, "succeeded")
	if got := e.gh.Branch(e.repo, svcBranch).Files["stats/basic.py"]; !strings.Contains(got, "return total(xs) / len(xs)\n") {
		t.Errorf("stats/basic.py is not the large model's fix:\n%s", got)
	}
	if n := len(e.model.Requests()); n != 0 {
		t.Errorf("the default model got %d request(s); the run asked for large", n)
	}
	if len(large.Requests()) == 0 {
		t.Error("the large model got no request")
	}
	prs := e.gh.PRs(e.repo)
	if len(prs) != 1 || !strings.Contains(prs[0].Body, "- Model: `large` (`large/coder`)") {
		t.Fatalf("the PR body does not name the model:\n%+v", prs)
	}
	if !strings.Contains(r.Report, "- Model: `large`") {
		t.Errorf("the report does not name the model:\n%s", svcTail(r.Report, 3000))
	}
	if got := e.runModel(id); got != "large" {
		t.Errorf("runs.model = %q, want large", got)
	}
	var show, stderr bytes.Buffer
	if err := run(context.Background(), []string{"runs", "show", fmt.Sprint(id)}, e.getenv, &show, &stderr); err != nil {
		t.Fatalf("frognano runs show: %v\n%s", err, stderr.String())
	}
	if !regexp.MustCompile(`(?m)^model +large$`).MatchString(show.String()) {
		t.Errorf("frognano runs show does not name the model:\n%s", show.String())
	}
	show.Reset()
	if err := run(context.Background(), []string{"runs", "show", "--audit", fmt.Sprint(id)}, e.getenv, &show, &stderr); err != nil {
		t.Fatalf("frognano runs show --audit: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(show.String(), "\npatch written by model large\n") {
		t.Errorf("the audit trail does not name the model:\n%s", show.String())
	}
	if strings.Contains(e.logs.String(), e.env["LARGE_MODEL_KEY"]) {
		t.Error("the log holds the large model's key")
	}

	before := len(e.gh.Comments(e.repo, svcIssue))
	refused := e.askRun("huge")
	r = e.waitState(refused, svcRunWait, "skipped")
	if r.ExitReason != runs.ExitModel || e.runModel(refused) != "" {
		t.Errorf("refused run: exit reason %q, model %q", r.ExitReason, e.runModel(refused))
	}
	svcWait(t, 30*time.Second, "the refusal's comment", func() (bool, string) {
		cs := e.gh.Comments(e.repo, svcIssue)
		if len(cs) != before+1 {
			return false, "no new comment"
		}
		body := cs[len(cs)-1].Body
		for _, want := range []string{"The model `huge` that was asked for is not one the operator offers to this repository", "`default`, `large`"} {
			if !strings.Contains(body, want) {
				t.Fatalf("the refusal does not say %q:\n%s", want, body)
			}
		}
		return true, ""
	})
}

// TestServiceModelEscalation: with FROGNANO_ESCALATE_TO, a run whose default model's attempt
// fails the tests is tried again by the named model, whose fix is published; the PR body
// says that it escalated, and runs.model names the model that wrote the patch.
func TestServiceModelEscalation(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "attempt-wrong-fix.json")
	large := leaftest.NewServer(t, leaftest.LoadModel(t, "svc-pyaverage.json"))
	e.svcModelsFile(large.URL)
	e.env["FROGNANO_ESCALATE_TO"] = "large"
	p := e.start()

	id := e.queueRun(p)
	e.waitState(id, svcRunWait, "succeeded")
	if len(e.model.Requests()) == 0 || len(large.Requests()) == 0 {
		t.Errorf("requests: default %d, large %d; want both", len(e.model.Requests()), len(large.Requests()))
	}
	if got := e.gh.Branch(e.repo, svcBranch).Files["stats/basic.py"]; !strings.Contains(got, "return total(xs) / len(xs)\n") {
		t.Errorf("stats/basic.py is not the escalation's fix:\n%s", got)
	}
	prs := e.gh.PRs(e.repo)
	if len(prs) != 1 {
		t.Fatalf("%d PRs, want 1", len(prs))
	}
	for _, want := range []string{"- Model: `large` (`large/coder`)", "- Escalated: no attempt of model `default` passed the tests, so model `large` tried and wrote this patch"} {
		if !strings.Contains(prs[0].Body, want) {
			t.Errorf("PR body lacks %q:\n%s", want, svcTail(prs[0].Body, 4000))
		}
	}
	if got := e.runModel(id); got != "large" {
		t.Errorf("runs.model = %q, want large", got)
	}
	e.waitNoContainers(30 * time.Second)
}
