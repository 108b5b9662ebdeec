package settings

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func ptr[T any](v T) *T { return &v }

// problems returns Parse's problems as FILE:LINE:COL: lines, or fails the test when Parse did
// not refuse the file with an *InvalidError.
func problems(t *testing.T, data string) []string {
	t.Helper()
	_, err := Parse("f.yml", []byte(data))
	var ie *InvalidError
	if !errors.As(err, &ie) {
		t.Fatalf("Parse(%q): %v, want an *InvalidError", data, err)
	}
	var out []string
	for _, p := range ie.Problems {
		out = append(out, p.String())
	}
	return out
}

func TestParseRefusesWithLines(t *testing.T) {
	tests := []struct {
		name, data string
		want       []string
	}{
		{"yaml syntax", "label: x\nteams: [a,\nattempts: 2\n",
			[]string{"f.yml:2: YAML: did not find expected ',' or ']'"}}, // where the unclosed [ began
		{"mapping value in a value", "label: x\nmodel: a: b\n",
			[]string{"f.yml:2: YAML: mapping values are not allowed in this context"}},
		{"tab indentation", "pull_request:\n\tlabels: [a]\n",
			[]string{"f.yml:2: YAML: found character that cannot start any token"}},
		{"unknown key", "label: x\n\ncolour: red\n",
			[]string{`f.yml:3:1: unknown key "colour" (allowed: label, permission, teams, base_branch, attempts, model, follow_ups, ci_feedback, protected_paths, pull_request, runs_per_day)`}},
		{"unknown nested key", "pull_request:\n  labels: [bug]\n  reviewer: [ann]\n",
			[]string{`f.yml:3:3: pull_request: unknown key "reviewer" (allowed: labels, reviewers, team_reviewers)`}},
		{"wrong type", "attempts: two\n",
			[]string{"f.yml:1:11: attempts: got string, want integer"}},
		{"a glob and a schema problem at once", "attempts: two\nprotected_paths: [\"./x\", 7]\n",
			[]string{"f.yml:1:11: attempts: got string, want integer",
				`f.yml:2:19: protected_paths: "./x" has an empty, "." or ".." part, which no path from the repository's root has: write the path from the root, such as deploy/**`,
				"f.yml:2:26: protected_paths.1: got number, want string"}},
		{"wrong type in a list", "teams:\n  - core\n  - 7\n",
			[]string{"f.yml:3:5: teams.1: got number, want string"}},
		{"below minimum", "attempts: 0\n",
			[]string{"f.yml:1:11: attempts: minimum: got 0, want 1"}},
		{"negative runs per day", "runs_per_day: -1\n",
			[]string{"f.yml:1:15: runs_per_day: minimum: got -1, want 0"}},
		{"bad permission", "permission: triage\n",
			[]string{`f.yml:1:13: permission: value must be one of 'write', 'maintain', 'admin'`}},
		{"several, in the file's order", "follow_ups: yes please\nnope: 1\nattempts: 1.5\n",
			[]string{"f.yml:1:13: follow_ups: got string, want boolean", `f.yml:2:1: unknown key "nope" (allowed: label, permission, teams, base_branch, attempts, model, follow_ups, ci_feedback, protected_paths, pull_request, runs_per_day)`, "f.yml:3:11: attempts: got number, want integer"}},
		{"key set twice", "label: a\nlabel: b\n",
			[]string{"f.yml:2:1: label is set twice"}},
		{"alias", "label: &l a\nmodel: *l\n",
			[]string{"f.yml:1:8: anchors and aliases (&, *) are not allowed in a settings file", "f.yml:2:8: anchors and aliases (&, *) are not allowed in a settings file"}},
		{"not a mapping", "- label\n",
			[]string{"f.yml:1:1: got array, want object"}},
		{"bad glob", "protected_paths:\n  - deploy/**\n  - 'src/[a'\n",
			[]string{`f.yml:3:5: protected_paths: "src/[a" is not a valid glob (an unclosed [ or a trailing \)`}},
		{"dot segments", "protected_paths:\n  - ./deploy/**\n  - 'src/../secrets'\n  - a//b\n  - /\n",
			[]string{
				`f.yml:2:5: protected_paths: "./deploy/**" has an empty, "." or ".." part, which no path from the repository's root has: write the path from the root, such as deploy/**`,
				`f.yml:3:5: protected_paths: "src/../secrets" has an empty, "." or ".." part, which no path from the repository's root has: write the path from the root, such as deploy/**`,
				`f.yml:4:5: protected_paths: "a//b" has an empty, "." or ".." part, which no path from the repository's root has: write the path from the root, such as deploy/**`,
				`f.yml:5:5: protected_paths: "/" has an empty, "." or ".." part, which no path from the repository's root has: write the path from the root, such as deploy/**`,
			}},
		{"huge number", "attempts: 99999999999999999999\n",
			[]string{"f.yml:1:11: 99999999999999999999 is not a number a setting can hold"}},
		{"two documents", "label: a\n---\nlabel: b\n",
			[]string{"f.yml:2:1: a second YAML document: a settings file holds one"}},
		{"bad team slug", "teams: [Core Team]\n",
			[]string{"f.yml:1:9: teams.0: '" + "Core Team" + "' does not match pattern '^[a-z0-9][a-z0-9_-]*$'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := problems(t, tt.data)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestParseReadsEveryKey(t *testing.T) {
	data := `# every key
label: ai-fix
permission: maintain
teams: [core, release-team]
base_branch: develop
attempts: 3
model: small
follow_ups: false
ci_feedback: true
protected_paths: [".github/**", "migrations/*.sql"]
pull_request:
  labels: [bot]
  reviewers: [ann]
  team_reviewers: [core]
runs_per_day: 20
`
	got, err := Parse("f.yml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{
		Label: ptr("ai-fix"), Permission: ptr("maintain"), Teams: []string{"core", "release-team"},
		BaseBranch: ptr("develop"), Attempts: ptr(3), Model: ptr("small"), FollowUps: ptr(false),
		CIFeedback: ptr(true), ProtectedPaths: []string{".github/**", "migrations/*.sql"},
		PullRequest: &PullRequest{Labels: []string{"bot"}, Reviewers: []string{"ann"}, TeamReviewers: []string{"core"}},
		RunsPerDay:  ptr(20),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse:\n%+v\nwant\n%+v", got, want)
	}
}

func TestParseEmptyFileSetsNothing(t *testing.T) {
	for _, data := range []string{"", "# only a comment\n", "---\n", "~\n"} {
		got, err := Parse("f.yml", []byte(data))
		if err != nil || !reflect.DeepEqual(got, Settings{}) {
			t.Errorf("Parse(%q) = %+v, %v; want nothing set", data, got, err)
		}
	}
}

func TestParseRefusesAFileTooLarge(t *testing.T) {
	got := problems(t, "label: x\n"+strings.Repeat("# padding\n", MaxSize/10+1))
	if len(got) != 1 || got[0] != "f.yml:1:1: the file is larger than the 65536 bytes a settings file may have" {
		t.Errorf("problems = %q", got)
	}
}

func TestMergeRepositoryWinsKeyByKey(t *testing.T) {
	org, err := Parse("org.yml", []byte("label: org-label\nattempts: 2\nteams: [core]\nprotected_paths: [secrets/**]\npull_request:\n  labels: [org]\n  reviewers: [ann]\n"))
	if err != nil {
		t.Fatal(err)
	}
	repo, err := Parse("repo.yml", []byte("attempts: 1\nteams: []\npull_request:\n  labels: [repo]\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := Merge(org, repo)
	want := Settings{
		Label: ptr("org-label"), Attempts: ptr(1), Teams: []string{}, ProtectedPaths: []string{"secrets/**"},
		PullRequest: &PullRequest{Labels: []string{"repo"}, Reviewers: []string{"ann"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Merge:\n%+v\nwant\n%+v", got, want)
	}
	if got := Merge(Settings{}, repo); !reflect.DeepEqual(got, repo) {
		t.Errorf("Merge without an organisation file = %+v, want the repository's", got)
	}
	if got := Merge(org, Settings{}); !reflect.DeepEqual(got, org) {
		t.Errorf("Merge without a repository file = %+v, want the organisation's", got)
	}
}

func TestLimitAppliesTheOperatorsCeilings(t *testing.T) {
	c := Ceilings{Attempts: 4, RunsPerDay: 10, Models: []string{"frognano", "big"}}
	tests := []struct {
		name      string
		in, want  Settings
		wantNotes []string
	}{
		{"below every ceiling", Settings{Attempts: ptr(2), RunsPerDay: ptr(5), Model: ptr("big")},
			Settings{Attempts: ptr(2), RunsPerDay: ptr(5), Model: ptr("big")}, nil},
		{"at the ceilings", Settings{Attempts: ptr(4), RunsPerDay: ptr(10)}, Settings{Attempts: ptr(4), RunsPerDay: ptr(10)}, nil},
		{"above", Settings{Attempts: ptr(9), RunsPerDay: ptr(50), Model: ptr("huge")},
			Settings{Attempts: ptr(4), RunsPerDay: ptr(10)},
			[]string{"attempts=9 is above the operator's ceiling 4; 4 is used", "runs_per_day=50 is above the operator's ceiling 10; 10 is used",
				"model=huge is not a model the operator offers (it offers frognano, big); the operator's default is used"}},
		{"no operator budget of runs", Settings{RunsPerDay: ptr(50)}, Settings{RunsPerDay: ptr(50)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cc := c
			if tt.name == "no operator budget of runs" {
				cc.RunsPerDay = 0
			}
			got, notes := Limit(tt.in, cc)
			if !reflect.DeepEqual(got, tt.want) || !reflect.DeepEqual(notes, tt.wantNotes) {
				t.Errorf("Limit = %+v, %q; want %+v, %q", got, notes, tt.want, tt.wantNotes)
			}
		})
	}
}

func TestAllowsTheLeastPermission(t *testing.T) {
	tests := []struct {
		least, have string
		want        bool
	}{
		{"", "write", true}, {"", "triage", false}, {"", "read", false}, {"", "none", false},
		{"maintain", "write", false}, {"maintain", "maintain", true}, {"maintain", "admin", true},
		{"admin", "maintain", false}, {"admin", "admin", true}, {"write", "", false},
	}
	for _, tt := range tests {
		s := Settings{}
		if tt.least != "" {
			s.Permission = ptr(tt.least)
		}
		if got := s.Allows(tt.have); got != tt.want {
			t.Errorf("permission %q, have %q: Allows = %v, want %v", tt.least, tt.have, got, tt.want)
		}
	}
}

func TestMatchPath(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{".github/**", ".github/workflows/ci.yml", true},
		{".github/**", ".github", true},
		{".github/**", "src/.github/x", false},
		{"**/*.pem", "a/b/key.pem", true},
		{"**/*.pem", "key.pem", true},
		{"migrations/*.sql", "migrations/0001.sql", true},
		{"migrations/*.sql", "migrations/old/0001.sql", false},
		{"go.mod", "go.mod", true},
		{"go.mod", "sub/go.mod", false},
		{"src/**/gen/*", "src/a/b/gen/x.go", true},
		{"src/[a", "src/[a", false},
		// A pattern that matches a directory protects what is in it, written with a trailing
		// slash or not, and a leading slash is the root.
		{"secrets/", "secrets/key.pem", true},
		{"secrets", "secrets/a/key.pem", true},
		{"/secrets", "secrets/key.pem", true},
		{"deploy/*/", "deploy/prod/values.yaml", true},
		{"secrets/", "secretsx/key.pem", false},
		{"secrets/", "src/secrets/key.pem", false},
	}
	for _, tt := range tests {
		if got := MatchPath(tt.pattern, tt.name); got != tt.want {
			t.Errorf("MatchPath(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

// TestPublishedSchemaIsTheEmbeddedOne keeps docs/frognano.schema.json, which editors and
// people read, byte-identical with the schema Parse validates against.
func TestPublishedSchemaIsTheEmbeddedOne(t *testing.T) {
	published, err := os.ReadFile("../docs/frognano.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(published, Schema) {
		t.Error("docs/frognano.schema.json differs from settings/schema.json: copy settings/schema.json there")
	}
}

func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"", "label: x\n", "attempts: 3\nrunsper: 1\n", "teams: [a, b]\npull_request:\n  labels: [x]\n",
		"a: &x [*x]\n", "protected_paths: ['[', '**']\n", "- 1\n- 2\n", "{label: 1}\n", "label: !!binary aGk=\n",
		"? [a]\n: b\n", "attempts: 0x10\n", "protected_paths: [./a, a//b, /, secrets/]\n", "follow_ups: yes\n", "label: a\n---\n", "\t", "attempts: .inf\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("f.yml", data)
		// LabelOf reads the same file leniently: whatever a valid file's label is, it is that.
		if l := LabelOf(data); err == nil && s.Label != nil && l != *s.Label || err == nil && s.Label == nil && l != "" {
			t.Fatalf("LabelOf = %q, Parse's label %v", l, s.Label)
		} else if n := utf8.RuneCountInString(l); l != "" && (n > 50 || n < 1) {
			t.Fatalf("LabelOf = %q: not 1 to 50 characters", l)
		}
		if err != nil {
			var ie *InvalidError
			if !errors.As(err, &ie) || len(ie.Problems) == 0 {
				t.Fatalf("Parse error %v is not an *InvalidError with problems", err)
			}
			for _, p := range ie.Problems {
				if p.Line < 1 || p.Message == "" {
					t.Fatalf("problem without a line or message: %+v", p)
				}
			}
			return
		}
		if s.Attempts != nil && *s.Attempts < 1 || s.RunsPerDay != nil && *s.RunsPerDay < 0 {
			t.Fatalf("Parse accepted %+v", s)
		}
		if s.Permission != nil && !s.Allows(*s.Permission) {
			t.Fatalf("permission %q does not allow itself", *s.Permission)
		}
	})
}

// TestDocumentedExampleIsValid keeps the example of docs/environments.md valid: a newcomer
// copies it.
func TestDocumentedExampleIsValid(t *testing.T) {
	doc, err := os.ReadFile("../docs/environments.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "### The settings file")
	if !ok {
		t.Fatal("docs/environments.md has no section on the settings file")
	}
	_, rest, ok = strings.Cut(rest, "```yaml\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("the settings file's section has no yaml example")
	}
	s, err := Parse("docs/environments.md", []byte(example))
	if err != nil {
		t.Fatalf("the documented example is invalid:\n%v", err)
	}
	if s.Permission == nil || len(s.ProtectedPaths) == 0 || s.PullRequest == nil || s.RunsPerDay == nil {
		t.Errorf("the documented example sets %+v; want every key", s)
	}
}

// TestLabelOf: the trigger label is read from an invalid file too, so that the run its label
// asked for names the file's problems instead of being ignored; a label the schema refuses is
// none.
func TestLabelOf(t *testing.T) {
	for data, want := range map[string]string{
		"label: ai-fix\n":                      "ai-fix",
		"label: ai-fix\ncolour: red\n":         "ai-fix",
		"label: ai-fix\nattempts: many\n":      "ai-fix",
		"attempts: 2\n":                        "",
		"label: 12\n":                          "",
		"label: \"\"\n":                        "",
		"label: " + strings.Repeat("x", 51):    "",
		"label: [a]\n":                         "",
		"label: ai-fix\n  bad: indentation: [": "",
		"- label: x\n":                         "",
		"x: &a ai-fix\nlabel: *a\n":            "",
	} {
		if got := LabelOf([]byte(data)); got != want {
			t.Errorf("LabelOf(%q) = %q, want %q", data, got, want)
		}
	}
}
