package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/frognano/frognano/api"
)

// TestServiceAPIStartsARun: through the real service, an operator makes tokens with `frognano
// tokens create`; `frognano runs start OWNER/REPO#N`, which goes through POST /api/v1/runs with
// one of them, starts a run that opens a draft pull request (the fake GitHub, the scripted
// model), recorded as the token's; GET /api/v1/runs/{id} reads it with its pull request. A
// revoked token gets 401 and a token scoped to another repository 403, and neither starts a
// run; `frognano tokens list` never shows a secret.
func TestServiceAPIStartsARun(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-pyaverage.json")
	p := e.start()
	ctx := context.Background()
	cli := func(env map[string]string, args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(ctx, args, func(k string) string {
			if v, ok := env[k]; ok {
				return v
			}
			return e.getenv(k)
		}, &out, &errOut)
		return out.String(), err
	}
	repo := svcOwner + "/" + svcRepo
	runsCount := func() int {
		var n int
		if err := e.db.QueryRow(ctx, `SELECT count(*) FROM runs`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	newToken := func(name, scope string) string {
		out, err := cli(nil, "tokens", "create", "--name", name, "--repo", scope)
		if err != nil {
			t.Fatalf("tokens create %s: %v", name, err)
		}
		return strings.TrimSpace(out)
	}
	tracker := newToken("tracker", repo)
	elsewhere := newToken("elsewhere", svcOwner+"/another")
	old := newToken("old", repo)
	if _, err := cli(nil, "tokens", "revoke", "3"); err != nil {
		t.Fatalf("tokens revoke: %v", err)
	}

	base := "http://" + p.addr
	post := func(secret string) int {
		c := &api.Client{BaseURL: base, Token: secret}
		_, err := c.Start(ctx, api.StartRequest{Repository: repo, Issue: svcIssue})
		if ae, ok := err.(*api.AnswerError); ok {
			return ae.Status
		}
		t.Fatalf("a refused token's request: %v, want a refusal", err)
		return 0
	}
	if got := post(old); got != http.StatusUnauthorized {
		t.Errorf("revoked token: %d, want 401", got)
	}
	if got := post(elsewhere); got != http.StatusForbidden {
		t.Errorf("token of another repository: %d, want 403", got)
	}
	if n := runsCount(); n != 0 {
		t.Fatalf("%d runs after refused requests, want 0", n)
	}

	env := map[string]string{"FROGNANO_API_URL": base, "FROGNANO_API_TOKEN": tracker}
	out, err := cli(env, "runs", "start", repo+"#"+strconv.Itoa(svcIssue), "--attempts", "1", "--instructions", "Keep the function's name.")
	if err != nil {
		t.Fatalf("runs start: %v (%s)", err, out)
	}
	m := regexp.MustCompile(`^run (\d+) queued`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("runs start printed %q", out)
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	// A second request on the issue while its run is active names it.
	if _, err := cli(env, "runs", "start", repo+"#"+strconv.Itoa(svcIssue)); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("already has an active run: run %d", id)) {
		t.Errorf("second runs start: %v", err)
	}
	row := e.waitState(id, svcRunWait, "succeeded")
	prs := e.gh.PRs(e.repo)
	if len(prs) != 1 || !prs[0].Draft || prs[0].HTMLURL != row.PRURL {
		t.Fatalf("PRs %+v, want one draft, the run's", prs)
	}
	var trigger, labeler, request string
	var tokenID, attempts int64
	if err := e.db.QueryRow(ctx, `SELECT trigger, labeler, coalesce(request, ''), coalesce(token_id, 0), coalesce(asked_attempts, 0)
		FROM runs WHERE id = $1`, id).Scan(&trigger, &labeler, &request, &tokenID, &attempts); err != nil {
		t.Fatal(err)
	}
	if trigger != "api" || labeler != "token:tracker" || tokenID != 1 || attempts != 1 || request != "Keep the function's name." {
		t.Errorf("run recorded trigger %q, labeler %q, token %d, attempts %d, request %q", trigger, labeler, tokenID, attempts, request)
	}
	if n := runsCount(); n != 1 {
		t.Errorf("%d runs, want 1", n)
	}

	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/api/v1/runs/%d", base, id), nil)
	req.Header.Set("Authorization", "Bearer "+tracker)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got api.RunAnswer
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %d, %v", resp.StatusCode, err)
	}
	if got.ID != id || got.State != "succeeded" || got.Kind != "issue" || got.Repository != repo || got.Issue != svcIssue ||
		got.PullRequestURL != prs[0].HTMLURL || got.CreatedAt == nil || got.EndedAt == nil || got.EndedAt.Before(*got.CreatedAt) {
		t.Errorf("GET answered %+v", got)
	}

	// The run's audit says which token started it.
	audit, err := cli(nil, "runs", "show", strconv.FormatInt(id, 10), "--audit")
	if err != nil || !strings.Contains(audit, "started by API token tracker (id 1)") {
		t.Errorf("runs show --audit: %v\n%s", err, audit)
	}

	list, err := cli(nil, "tokens", "list")
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{tracker, elsewhere, old} {
		if strings.Contains(list, secret) || strings.Contains(list, secret[len(api.TokenPrefix):20]) {
			t.Errorf("tokens list shows a secret:\n%s", list)
		}
	}
	if !regexp.MustCompile(`(?m)^1\s+tracker\s+`+regexp.QuoteMeta(strings.ToLower(repo))+`\s+\S+\s+\d{4}-`).MatchString(list) ||
		!regexp.MustCompile(`(?m)^3\s+old\s.*\d{4}-\S+\s*$`).MatchString(list) {
		t.Errorf("tokens list:\n%s", list)
	}
	if strings.Contains(e.logs.String(), tracker) {
		t.Error("the service logged the token")
	}
}
