package run_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/settings"
)

// TestInvalidSettingsCommentOncePerError: a run that meets an invalid settings file does not
// start (skipped, settings_invalid, no clone, no agent), and the first one posts the comment
// that names the file, the line and what is wrong; a later run that meets the same error links
// to it; a different error gets a comment of its own; fixing the file marks the error resolved
// (doctor's list empties) and runs start again.
func TestInvalidSettingsCommentOncePerError(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	ctx := context.Background()
	p.Repo.Files = map[string]string{settings.Path: "label: ai\ncolour: red\n"}

	first := p.Label(t, 7)
	if r := p.Work(t, first, 1); !r.Completed() {
		t.Fatalf("Work: %v", r)
	}
	row := p.Row(t, first)
	if row.State != run.StateSkipped || row.ExitReason != run.ExitSettingsInvalid {
		t.Errorf("run = %s/%s, want skipped/%s", row.State, row.ExitReason, run.ExitSettingsInvalid)
	}
	comments := p.Repo.Comments()
	if len(comments) != 1 || !strings.Contains(comments[0], "`.github/frognano.yml:2:1: unknown key \"colour\"") {
		t.Fatalf("comments = %q, want one naming .github/frognano.yml:2:1", comments)
	}
	if p.Runner.Calls() != 0 || p.Repo.Clones() != 0 {
		t.Errorf("the agent ran %d times, %d clones: want none", p.Runner.Calls(), p.Repo.Clones())
	}
	listed, err := p.Store.InvalidSettings(ctx)
	if err != nil || len(listed) != 1 || listed[0].Owner != "octo" || !strings.Contains(listed[0].Problems, ":2:1:") {
		t.Fatalf("InvalidSettings = %+v, %v; want octo/pager's problem", listed, err)
	}
	firstURL := listed[0].CommentURL
	if want := "https://github.example/octo/pager/issues/7#issuecomment-" + strconv.FormatInt(row.CommentID, 10); firstURL != want {
		t.Errorf("comment URL = %q, want %q", firstURL, want)
	}

	// The same error on another issue: a short comment that links to the first.
	second := p.Label(t, 8)
	if r := p.Work(t, second, 1); !r.Completed() {
		t.Fatalf("Work: %v", r)
	}
	comments = p.Repo.Comments()
	if len(comments) != 2 || strings.Contains(comments[1], "colour") || !strings.Contains(comments[1], "("+firstURL+")") {
		t.Fatalf("second comment = %q, want a link to %s and not the problems again", comments[len(comments)-1], firstURL)
	}
	if row := p.Row(t, second); row.State != run.StateSkipped || row.ExitReason != run.ExitSettingsInvalid {
		t.Errorf("second run = %s/%s, want skipped", row.State, row.ExitReason)
	}

	// Another error: its own comment, with its own line.
	p.Repo.Lock()
	p.Repo.Files[settings.Path] = "label: ai\nattempts: many\n"
	p.Repo.Unlock()
	third := p.Label(t, 9)
	p.Work(t, third, 1)
	comments = p.Repo.Comments()
	if len(comments) != 3 || !strings.Contains(comments[2], "`.github/frognano.yml:2:11: attempts: got string, want integer`") {
		t.Fatalf("third comment = %q, want the new problem", comments[len(comments)-1])
	}

	// Fixed: the run goes ahead, and doctor lists nothing.
	p.Repo.Lock()
	p.Repo.Files[settings.Path] = "label: ai\nattempts: 1\n"
	p.Repo.Unlock()
	fixed := p.Label(t, 10)
	if r := p.Work(t, fixed, 1); !r.Completed() {
		t.Fatalf("Work: %v", r)
	}
	if row := p.Row(t, fixed); row.State != run.StateSucceeded {
		t.Errorf("run with valid settings = %s (%s), want succeeded", row.State, row.Error)
	}
	if listed, err := p.Store.InvalidSettings(ctx); err != nil || len(listed) != 0 {
		t.Errorf("InvalidSettings after the fix = %+v, %v; want none", listed, err)
	}
}

// TestOrganisationSettingsUnderTheRepositorys: the organisation's file sets defaults the
// repository's overrides key by key; an invalid organisation file is named as such.
func TestOrganisationSettingsUnderTheRepositorys(t *testing.T) {
	t.Parallel()
	t.Run("defaults overridden", func(t *testing.T) {
		t.Parallel()
		p := runtest.New(t)
		// The organisation protects pager.go and lets only admins start runs; the repository
		// lets maintainers.
		p.Repo.OrgFiles = map[string]string{settings.Path: "permission: admin\nprotected_paths: [pager.go]\n"}
		p.Repo.Files = map[string]string{settings.Path: "permission: maintain\n"}
		p.Repo.Perm = "maintain"
		id := p.Label(t, 7)
		p.Work(t, id, 1)
		row := p.Row(t, id)
		if row.State != run.StateFailed || row.ExitReason != run.ExitProtectedPath {
			t.Fatalf("run = %s/%s, want failed/%s: the maintainer may start it, the organisation's protected path holds", row.State, row.ExitReason, run.ExitProtectedPath)
		}
		if len(p.Repo.Publishes()) != 0 {
			t.Errorf("published %d times, want none", len(p.Repo.Publishes()))
		}
		if last := p.Repo.LastEdit().Body; !strings.Contains(last, "it changes `pager.go`, which the repository's .github/frognano.yml protects (`pager.go`)") {
			t.Errorf("final status = %q, want the protected path named", last)
		}
	})
	t.Run("invalid organisation file", func(t *testing.T) {
		t.Parallel()
		p := runtest.New(t)
		p.Repo.OrgFiles = map[string]string{settings.Path: "teams: core\n"}
		id := p.Label(t, 7)
		p.Work(t, id, 1)
		// Named by its place only: the organisation's .github repository may be private while
		// this repository is public, and a message can quote the file.
		if c := p.Repo.Comments(); len(c) != 1 || !strings.Contains(c[0], "`octo/.github/.github/frognano.yml:1:8` (the organisation's file") ||
			strings.Contains(c[0], "got string") {
			t.Errorf("comments = %q, want the organisation's file named by its place, without its message", c)
		}
	})
}

// TestSettingsPermissionAndTeams: the least permission of the settings refuses a writer (with
// words that say what is needed), and a member of a listed team may start a run whatever their
// permission.
func TestSettingsPermissionAndTeams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, perm string
		teams            map[string][]string
		want             string
		denial           string
	}{
		{"writer below maintain", "permission: maintain\n", "write", nil, run.StateSkipped, "only starts for people with maintain or admin permission"},
		{"admin", "permission: maintain\n", "admin", nil, run.StateSucceeded, ""},
		{"reader in a team", "teams: [core, docs]\n", "read", map[string][]string{"docs": {"maintainer"}}, run.StateSucceeded, ""},
		{"reader in no team", "teams: [core]\n", "read", map[string][]string{"docs": {"maintainer"}}, run.StateSkipped, "and for members of the teams `core`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := runtest.New(t)
			p.Repo.Files = map[string]string{settings.Path: tt.file}
			p.Repo.Perm, p.Repo.Teams = tt.perm, tt.teams
			id := p.Label(t, 7)
			p.Work(t, id, 1)
			if row := p.Row(t, id); row.State != tt.want {
				t.Errorf("state = %s (%s), want %s", row.State, row.Error, tt.want)
			}
			if tt.denial != "" {
				if c := p.Repo.Comments(); len(c) != 1 || !strings.Contains(c[0], tt.denial) {
					t.Errorf("comments = %q, want %q", c, tt.denial)
				}
			}
		})
	}
}

// TestSettingsAboveTheCeilingsAreNamed: a value above the operator's ceiling is named in the
// status comment and the pull request body (the runner's notices), and the ceiling is used.
func TestSettingsAboveTheCeilingsAreNamed(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Config.Ceilings = settings.Ceilings{Attempts: 2, Models: []string{"frognano"}}
	p.Repo.Files = map[string]string{settings.Path: "attempts: 5\n"}
	id := p.Label(t, 7)
	if r := p.Work(t, id, 1); !r.Completed() {
		t.Fatalf("Work: %v", r)
	}
	const note = "`attempts=5 is above the operator's ceiling 2; 2 is used`"
	// The runner ends the pull request body with the spec's notices (report.PRBody).
	specs := p.Runner.Specs()
	if len(specs) != 1 || len(specs[0].Notices) != 1 || !strings.Contains(specs[0].Notices[0], note) {
		t.Fatalf("the agent's specs = %+v, want one whose notices name %s", specs, note)
	}
	if last := p.Repo.LastEdit().Body; !strings.Contains(last, note) {
		t.Errorf("status comment = %q, want %s", last, note)
	}
}

// TestSettingsRunsPerDayAboveTheInstallationsBudget: the ceiling of runs_per_day is the
// installation's own budget when the operator set one (`frognano budget set --repo-runs`), not
// only FROGNANO_BUDGET_REPOSITORY_RUNS_PER_DAY: a value above it is named too.
func TestSettingsRunsPerDayAboveTheInstallationsBudget(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Config.Ceilings = settings.Ceilings{Models: []string{"frognano"}}
	two := int64(2)
	if err := p.Store.SetBudget(context.Background(), runtest.Installation, run.BudgetOverride{RepoRuns: &two}); err != nil {
		t.Fatal(err)
	}
	p.Repo.Files = map[string]string{settings.Path: "runs_per_day: 5\n"}
	id := p.Label(t, 7)
	if r := p.Work(t, id, 1); !r.Completed() {
		t.Fatalf("Work: %v", r)
	}
	const note = "`runs_per_day=5 is above the operator's ceiling 2; 2 is used`"
	if last := p.Repo.LastEdit().Body; !strings.Contains(last, note) {
		t.Errorf("status comment = %q, want %s", last, note)
	}
}

// TestSettingsRunsPerDay: the repository's runs_per_day caps its runs of the UTC day below the
// operator's budget; the run past it is skipped, and its note names the settings file.
func TestSettingsRunsPerDay(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Repo.Files = map[string]string{settings.Path: "runs_per_day: 1\n"}
	first := p.Label(t, 7)
	if r := p.Work(t, first, 1); !r.Completed() {
		t.Fatalf("Work: %v", r)
	}
	if row := p.Row(t, first); row.State != run.StateSucceeded {
		t.Fatalf("first run = %s (%s), want succeeded", row.State, row.Error)
	}
	second := p.Label(t, 8)
	if r := p.Work(t, second, 1); !r.Completed() {
		t.Fatalf("Work: %v", r)
	}
	if row := p.Row(t, second); row.State != run.StateSkipped || row.ExitReason != run.ExitBudget {
		t.Errorf("second run = %s/%s, want skipped/%s", row.State, row.ExitReason, run.ExitBudget)
	}
	if _, err := p.WriteOutbox(t, second); err != nil {
		t.Fatal(err)
	}
	const want = "This repository's budget of 1 runs a day is spent: 1 runs have started since 00:00 UTC (`runs_per_day` of the repository's .github/frognano.yml)"
	found := false
	for _, c := range append(p.Repo.Comments(), p.Repo.LastEdit().Body) {
		found = found || strings.Contains(c, want)
	}
	if !found {
		t.Errorf("no comment says %q: %q", want, p.Repo.Comments())
	}
}

// TestSettingsTurnFollowUpsOff: follow_ups: false answers a writer's request on a pull request
// once and starts nothing; ci_feedback: false skips a CI follow-up without a word (nobody asked).
func TestSettingsTurnFollowUpsOff(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Repo.Files = map[string]string{settings.Path: "follow_ups: false\nci_feedback: false\n"}
	p.Repo.PR.HeadSHA = ciSHA

	id := followUp(t, p, "reviewer", "please also handle page 0")
	if r := p.Work(t, id, 1); !r.Completed() {
		t.Fatalf("Work: %v", r)
	}
	if row := p.Row(t, id); row.State != run.StateSkipped {
		t.Errorf("follow-up = %s, want skipped", row.State)
	}
	if c := p.Repo.Comments(); len(c) != 1 || !strings.Contains(c[0], "@reviewer, follow-ups are off in this repository (`follow_ups: false`") {
		t.Errorf("comments = %q, want one reply that says follow-ups are off", c)
	}

	ci := ciRun(t, p, ciSHA)
	if r := p.Work(t, ci, 1); !r.Completed() {
		t.Fatalf("Work: %v", r)
	}
	if row := p.Row(t, ci); row.State != run.StateSkipped {
		t.Errorf("CI follow-up = %s, want skipped", row.State)
	}
	if n, c := p.Runner.Calls(), p.Repo.Comments(); n != 0 || len(c) != 1 {
		t.Errorf("the agent ran %d times, %d comments: want none and only the reply", n, len(c))
	}
}

// TestSettingsPullRequestLabelsAndReviewers: the settings' pull_request reaches the issue
// run's publish.
func TestSettingsPullRequestLabelsAndReviewers(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Repo.Files = map[string]string{settings.Path: "pull_request:\n  labels: [bot]\n  reviewers: [ann]\n  team_reviewers: [core]\n"}
	id := p.Label(t, 7)
	if r := p.Work(t, id, 1); !r.Completed() {
		t.Fatalf("Work: %v", r)
	}
	pubs := p.Repo.Publishes()
	if len(pubs) != 1 {
		t.Fatalf("%d publishes, want 1", len(pubs))
	}
	in := pubs[0]
	if !slices.Equal(in.Labels, []string{"bot"}) || !slices.Equal(in.Reviewers, []string{"ann"}) || !slices.Equal(in.TeamReviewers, []string{"core"}) {
		t.Errorf("publish labels %v, reviewers %v, teams %v; want [bot] [ann] [core]", in.Labels, in.Reviewers, in.TeamReviewers)
	}
}

// TestInvalidSettingsCommentRetried: a run whose comment could not be posted (GitHub failed)
// posts the problems on its retry, since it is the one that met them first; a run that meets
// them meanwhile says an earlier comment names them, without posting them a second time.
func TestInvalidSettingsCommentRetried(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Repo.Files = map[string]string{settings.Path: "attempts: 0\n"}
	p.Repo.FailNext("Comment", runtest.Flaky("posting"))
	id := p.Label(t, 7)
	if r := p.Work(t, id, 1); r.Completed() {
		t.Fatalf("Work completed despite the failed comment: %v", r)
	}
	other := p.Label(t, 8)
	p.Work(t, other, 1)
	if c := p.Repo.Comments(); len(c) != 1 || !strings.Contains(c[0], "the settings file is still invalid; an earlier comment names its problems") {
		t.Fatalf("comments = %q, want the other run's pointer only", c)
	}
	if r := p.Work(t, id, 2); !r.Completed() {
		t.Fatalf("retry: %v", r)
	}
	c := p.Repo.Comments()
	if len(c) != 2 || !strings.Contains(c[1], "`.github/frognano.yml:1:11: attempts: minimum: got 0, want 1`") {
		t.Errorf("comments = %q, want the retry to post the problems", c)
	}
	if row := p.Row(t, id); row.State != run.StateSkipped || row.ExitReason != run.ExitSettingsInvalid {
		t.Errorf("run = %s/%s, want skipped/%s", row.State, row.ExitReason, run.ExitSettingsInvalid)
	}
}

// modelChooser is a Runner that offers named models, as run.AgentRunner does: a run may use
// the names in offered, "default" when it asks for none.
type modelChooser struct {
	*runtest.Runner
	offered []string
}

func (m modelChooser) AllowedModels(string) []string { return m.offered }

func (m modelChooser) ChooseModel(repo, asked string) (string, error) {
	if asked == "" {
		return "default", nil
	}
	if !slices.Contains(m.offered, asked) {
		return "", &runner.ModelRefused{Name: asked, Repo: repo, Allowed: m.offered, Asked: true}
	}
	return asked, nil
}

// TestSettingsChooseTheModel: the settings' model is the run's when the request names none,
// the request's model wins over it, and a settings model the operator does not offer the
// repository is named in the status comment while the operator's default writes the patch.
func TestSettingsChooseTheModel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, asked, want, note string
	}{
		{"settings", "model: large\n", "", "large", ""},
		{"asked wins", "model: large\n", "small", "small", ""},
		{"not offered", "model: huge\n", "", "default", "`model=huge is not a model the operator offers (it offers default, small, large); the operator's default is used`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := runtest.New(t)
			p.Config.Runner = modelChooser{p.Runner, []string{"default", "small", "large"}}
			p.Repo.Files = map[string]string{settings.Path: tc.file}
			id := p.Request(t, runtest.Request{Issue: 7, Labeler: "maintainer", Trigger: run.TriggerMention, Options: run.Options{Model: tc.asked}})
			if r := p.Work(t, id, 1); !r.Completed() {
				t.Fatalf("Work: %v", r)
			}
			specs := p.Runner.Specs()
			if len(specs) != 1 || specs[0].Model != tc.want {
				t.Fatalf("the agent's specs = %+v, want one with model %q", specs, tc.want)
			}
			if last := p.Repo.LastEdit().Body; tc.note != "" && !strings.Contains(last, tc.note) {
				t.Errorf("status comment = %q, want %s", last, tc.note)
			}
		})
	}
}

// TestSettingsBaseAndAttempts: the settings' base_branch and attempts are a run's when its
// request names none, within the operator's ceiling; a request's own win over them.
func TestSettingsBaseAndAttempts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		asked    run.Options
		base     string
		attempts int
	}{
		{"settings", run.Options{}, "develop", 2},
		{"asked wins", run.Options{Base: "dev", Attempts: 1}, "dev", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := runtest.New(t)
			p.Runner.Ceiling = 3
			p.Repo.Files = map[string]string{settings.Path: "base_branch: develop\nattempts: 2\n"}
			id := p.Request(t, runtest.Request{Issue: 7, Labeler: "maintainer", Trigger: run.TriggerMention, Options: tc.asked})
			if r := p.Work(t, id, 1); !r.Completed() {
				t.Fatalf("Work: %v", r)
			}
			specs := p.Runner.Specs()
			if len(specs) != 1 || specs[0].Attempts != tc.attempts {
				t.Fatalf("the agent's specs = %+v, want one with %d attempts", specs, tc.attempts)
			}
			if got := p.Repo.BranchClones(); len(got) != 1 || got[0] != tc.base+" "+tc.base {
				t.Errorf("branch clones %q, want %s", got, tc.base)
			}
		})
	}
}
