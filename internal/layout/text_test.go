package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// textFiles are where what GitHub shows a person is worded, one file per kind: a newcomer who
// must change a sentence finds it in the file of its kind. (The pull request body's report and
// the check run are the runner's renderer's, not listed here.)
var textFiles = []struct{ kind, file string }{
	{"the status comment, and a follow-up's reply (which is its status comment)", "run/text_status.go"},
	{"frognano's refusals: who may not start a run, a missing permission, a spent budget", "run/text_refusals.go"},
	{"GitHub's refusals, worded from GitHub's answer (githubapp.Explain)", "githubapp/text_refusals.go"},
	{"notices: what a run skips and why", "run/text_notices.go"},
	{"replies to requests other than a run's status comment (`@APP stop`)", "run/text_replies.go"},
	{"the pull request: its title, the end of its body, a follow-up's section, commit messages", "run/text_pullrequest.go"},
}

// textPackages are the packages whose source the scan follows: every package that writes to
// GitHub or words what is written (a Comment, EditComment or Publish call, or a text they get).
var textPackages = []string{"githubapp", "run", "queue"}

func isTextFile(file string) bool {
	for _, f := range textFiles {
		if f.file == file {
			return true
		}
	}
	return false
}

// scanModule scans textPackages of the module.
func scanModule(t *testing.T) *textScan {
	t.Helper()
	var paths []string
	for _, dir := range textPackages {
		paths = append(paths, module+"/"+dir)
	}
	l := newLoader(exportsOf(t, "../..", paths...))
	for _, dir := range textPackages {
		if err := l.addDir("../..", dir, module+"/"+dir); err != nil {
			t.Fatalf("%v: update textPackages", err)
		}
	}
	for _, p := range paths {
		if _, err := l.check(p); err != nil {
			t.Fatal(err)
		}
	}
	s := newTextScan(l, module, isTextFile)
	s.run()
	return s
}

// TestGitHubTextInTextFiles checks that every sentence that reaches GitHub from the packages
// that write there (a comment's body, the status comment's note, notices and summary, the
// pull request's title, body and commit message) is a literal of a text file (textFiles), and
// that each text file is reached, so that the scan cannot go blind unnoticed.
func TestGitHubTextInTextFiles(t *testing.T) {
	t.Parallel()
	s := scanModule(t)
	for _, stray := range s.strays() {
		t.Errorf("%s\n\tGitHub shows this text (reached from %s): word it in the text file of its kind (textFiles), and name it where it is used",
			stray, s.stray[stray])
	}
	for _, f := range textFiles {
		if s.reached[f.file] == 0 {
			t.Errorf("%s (%s): no text of it reaches GitHub, as the scan sees it; has it moved? update textFiles", f.file, f.kind)
		}
	}
	t.Logf("%d places where text leaves for GitHub; words reached, by file: %v", s.roots, s.reached)
	for _, name := range []string{"(~/run.Repo).Comment", "(~/run.Repo).EditComment"} {
		if !s.sinks[name] {
			t.Errorf("no call of %s found: has it been renamed? update sinkCalls", name)
		}
	}
	declared := map[string]bool{}
	for fn := range s.funcs {
		declared[s.short(fn.FullName())] = true
	}
	for _, name := range []string{"(*~/githubapp.Client).Comment", "(*~/githubapp.Client).EditComment"} {
		if !declared[name] {
			t.Errorf("%s is not declared: has it been renamed? update sinkCalls", name)
		}
	}
	if s.roots < 20 {
		t.Errorf("the scan found %d places where text leaves for GitHub; expected at least 20: has a sink been renamed? update sinkCalls, sinkFields", s.roots)
	}
}

// TestGitHubWritersAreScanned checks that every package that may write to GitHub (it imports
// githubapp or run, and calls a Comment, EditComment or Publish method or builds a
// PublishInput) is one the text scan follows (textPackages).
func TestGitHubWritersAreScanned(t *testing.T) {
	t.Parallel()
	pkgs := list(t)
	for name, p := range pkgs {
		if contains(textPackages, name) || name == "internal/layout" {
			continue
		}
		imports := false
		for _, imp := range p.Imports {
			imports = imports || imp == module+"/githubapp" || imp == module+"/run"
		}
		if !imports {
			continue
		}
		files, err := filepath.Glob(filepath.Join("../..", name, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				writes := false
				switch n := n.(type) {
				case *ast.CallExpr:
					sel, ok := n.Fun.(*ast.SelectorExpr)
					writes = ok && (sel.Sel.Name == "Comment" || sel.Sel.Name == "EditComment" || sel.Sel.Name == "Publish")
				case *ast.CompositeLit:
					sel, ok := n.Type.(*ast.SelectorExpr)
					writes = ok && sel.Sel.Name == "PublishInput"
				}
				if writes {
					t.Errorf("%s (%s) may write to GitHub: add it to textPackages", name, filepath.Base(f))
					return false
				}
				return true
			})
		}
	}
}

// TestTextFilesAreListed checks that every text_*.go file of the module is a listed text file:
// a kind's wording has one place, and a new kind is named in textFiles.
func TestTextFilesAreListed(t *testing.T) {
	t.Parallel()
	found, err := filepath.Glob("../../*/text_*.go")
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob("../../*/*/text_*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(found, more...) {
		rel := strings.TrimPrefix(filepath.ToSlash(f), "../../")
		if strings.HasSuffix(rel, "_test.go") {
			continue
		}
		if !isTextFile(rel) {
			t.Errorf("%s is named as a text file but is not listed in textFiles: add it with its kind, or merge it into its kind's file", rel)
		}
	}
}

// TestTextScanCatches proves the scan on small packages: each has one sentence that reaches
// GitHub from outside the text file, by one of the ways text travels in the code.
func TestTextScanCatches(t *testing.T) {
	t.Parallel()
	const text = `package run

import "fmt"

const noteStarting = "Starting."

func renderStatus(v Status) string { return v.Note + "\n" + pageLine(v.Page) }

func pageLine(p string) string { return "The run's page: " + p }

func closed(what string) string { return fmt.Sprintf("%s, so nothing was done.", what) }

type budget struct{ scope string }

func (b budget) note() string { return "This " + b.scope + "'s budget is spent." }
`
	const types = `package run

import (
	"context"

	"github.com/frognano/frognano/githubapp"
)

type Status struct{ Note, Page string }

type Repo interface {
	Comment(ctx context.Context, n int, body string) (int64, error)
	EditComment(ctx context.Context, id int64, body string) error
	Publish(ctx context.Context, in githubapp.PublishInput) error
}

type attempt struct{ repo Repo }
`
	cases := []struct {
		name, src, want string
	}{
		{"CommentBody", `func (a *attempt) f(ctx context.Context) { a.repo.Comment(ctx, 1, "Hello there") }`, `"Hello there"`},
		{"ThroughALocal", `func (a *attempt) f(ctx context.Context) {
	body := renderStatus(Status{Note: noteStarting})
	if true {
		body = "Overwritten here"
	}
	a.repo.EditComment(ctx, 1, body)
}`, `"Overwritten here"`},
		{"StatusNote", `func f() string { return renderStatus(Status{Note: "The issue is gone."}) }`, `"The issue is gone."`},
		{"AHelpersResult", `func helper() string { return "Said elsewhere." }
func f() Status { return Status{Note: helper()} }`, `"Said elsewhere."`},
		{"AnArgumentOfATextFunction", `func (a *attempt) f(ctx context.Context) { a.repo.Comment(ctx, 1, closed("The pull request is closed")) }`,
			`"The pull request is closed"`},
		{"AParameterThatReachesANote", `func (a *attempt) end(ctx context.Context, note string) { _ = Status{Note: note} }
func (a *attempt) g(ctx context.Context) { a.end(ctx, "Ended for a reason.") }`, `"Ended for a reason."`},
		{"ABuilder", `func built() string {
	var b strings.Builder
	b.WriteString("Step one")
	fmt.Fprintf(&b, "%d", 3)
	return b.String()
}
func (a *attempt) f(ctx context.Context) { a.repo.Comment(ctx, 1, built()) }`, `"Step one"`},
		{"AFunctionParameter", `func (a *attempt) publish(say func(string) string) { _ = Status{Note: say(noteStarting)} }
func (a *attempt) g() { a.publish(func(n string) string { return "Triggered by CI. " + n }) }`, `"Triggered by CI. "`},
		{"APackageConstant", `const gone = "The branch is gone."
func f() Status { return Status{Note: gone} }`, `"The branch is gone."`},
		{"AConstantInAFunction", `func f() Status {
	const gone = "The branch is gone."
	return Status{Note: gone}
}`, `"The branch is gone."`},
		{"AnInterfaceMethod", `type noter interface{ note() string }
type issue struct{}
func (issue) note() string { return "An issue's note." }
func f(n noter) Status { return Status{Note: n.note()} }
var _ noter = issue{}`, `"An issue's note."`},
		{"APullRequestTitle", `func (a *attempt) f(ctx context.Context) { a.repo.Publish(ctx, githubapp.PublishInput{Title: "frognano: " + noteStarting}) }`, `"frognano: "`},
		{"AnAssignedNote", `func f(v *Status) { v.Note = fmt.Sprintf("Attempt %d failed", 2) }`, `"Attempt %d failed"`},
		{"AMapValue", `func f(k string) Status {
	return Status{Note: map[string]string{"a": noteStarting, "b": "Another reason."}[k]}
}`, `"Another reason."`},
		{"AFieldOfAnotherStruct", `func f() Status { return Status{Note: budget{scope: "installation"}.note()} }`, `"installation"`},
		{"ASlice", `func f() Status {
	var parts []string
	parts = append(parts, "One part.")
	return Status{Note: strings.Join(parts, "\n")}
}`, `"One part."`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			src := "package run\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\t\"strings\"\n\n\t\"github.com/frognano/frognano/githubapp\"\n)\n\n" +
				"var _, _, _, _ = context.Background, fmt.Sprint, strings.Join, githubapp.PublishInput{}\n\n" + c.src + "\n"
			s := scanSources(t, map[string]string{"run/text_status.go": text, "run/types.go": types, "run/code.go": src})
			strays := s.strays()
			if len(strays) != 1 || !strings.Contains(strays[0], "run/code.go:") || !strings.HasSuffix(strays[0], c.want) {
				t.Errorf("strays = %q; want one, in run/code.go, of %s", strays, c.want)
			}
		})
	}
	t.Run("WordedInTheTextFile", func(t *testing.T) {
		t.Parallel()
		src := `package run

import "context"

func (a *attempt) f(ctx context.Context, url string, n int) {
	a.repo.Comment(ctx, n, renderStatus(Status{Note: closed(noteStarting), Page: url}))
	a.repo.EditComment(ctx, 1, "")
	_ = Status{Note: "\n\n", Page: "https://example.invalid/run"} // no word; and Page is not text
}
`
		s := scanSources(t, map[string]string{"run/text_status.go": text, "run/types.go": types, "run/code.go": src})
		if strays := s.strays(); len(strays) != 0 {
			t.Errorf("strays = %q; want none", strays)
		}
		if s.reached["run/text_status.go"] != 3 { // "Starting.", closed's format and the page line's words
			t.Errorf("reached %v; want the text file's three", s.reached)
		}
	})
}

var (
	stdOnce    sync.Once
	stdExports map[string]string
)

func scanSources(t *testing.T, files map[string]string) *textScan {
	t.Helper()
	stdOnce.Do(func() { stdExports = exportsOf(t, "../..", "context", "fmt", "strings") })
	if stdExports == nil {
		t.Fatal("no export data for the standard library (see the first test that asked)")
	}
	l := newLoader(stdExports)
	src := map[string]any{}
	for name, text := range files {
		src[name] = text
	}
	l.src[module+"/run"] = src
	l.src[module+"/githubapp"] = map[string]any{"githubapp/types.go": `package githubapp

type PublishInput struct{ Title, Body string }
`}
	if _, err := l.check(module + "/run"); err != nil {
		t.Fatal(err)
	}
	s := newTextScan(l, module, func(f string) bool { return strings.HasPrefix(filepath.Base(f), "text_") })
	s.run()
	return s
}
