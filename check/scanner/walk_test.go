package scanner

import (
	"context"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/check/secrets"
	"github.com/frognano/frognano/internal/gittest"
)

// TestMovedFilesCountWhole: a patch that moves a file (examples/ holds code nobody ships) into
// the code that is shipped changes none of its lines in git's renamed view, so a scanner's
// finding on a moved line was "elsewhere" and dropped, though the code is new at that path.
// A file the patch moves counts whole: every line of it is a line the patch changed.
func TestMovedFilesCountWhole(t *testing.T) {
	t.Parallel()
	body := "import os\n\n\ndef run(cmd):\n    os.system(cmd)\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n"
	dir, base := gittest.Repo(t, map[string]string{"examples/unsafe.py": body, "app/__init__.py": ""})
	diff := patchOf(t, dir, []string{"examples/unsafe.py"}, map[string]string{"app/handler.py": strings.Replace(body, "return 2", "return 3", 1)})
	git := patch.HostGit(dir)
	frags, err := secrets.AddedLines(context.Background(), git, base, diff)
	if err != nil {
		t.Fatal(err)
	}
	added := make([]Added, 0, len(frags))
	for _, f := range frags {
		added = append(added, Added{Path: f.Path, Line: f.Line, Text: f.Text})
	}
	trees, err := NewTrees(context.Background(), git, base, base, diff)
	if err != nil {
		t.Fatal(err)
	}
	defer trees.Close()
	changed := ChangedLines(added).WithWhole(trees.Moved())
	got, err := Read(sarifLog(nil, result("py.os-system", "error", "command injection", "app/handler.py", 5)), "/workspace", changed)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Kept) != 1 || got.Kept[0].File != "app/handler.py" {
		t.Fatalf("a finding in a moved file was dropped: %+v (moved %q)", got, trees.Moved())
	}
	// A file the patch only edits still counts by its changed lines.
	if changed.Touches("app/__init__.py", 1, 1) {
		t.Errorf("an untouched file counts as changed: %v", changed)
	}
}

// TestReadPlacesEveryNameGitAllows: git lets a patch name a file with a backslash or a control
// character; a scanner writes that name into the SARIF uri as is (a JSON string can hold it) or
// escaped. A finding there was not placed, so it was counted "outside the repository" and
// failed nothing.
func TestReadPlacesEveryNameGitAllows(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"app\\x.py", "app/tab\there.py", "app/new\nline.py", "app/bell\x07.py", "app/del\x7f.py", "back\\slash#1.py"} {
		c := Changed{name: {{5, 5}}}
		for _, uri := range []string{name, (&urlPath{name}).escaped(), "/workspace/" + name, "file:///workspace/" + (&urlPath{name}).escaped()} {
			got, err := Read(sarifLog(nil, result("r", "error", "m", uri, 5)), "/workspace", c)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Kept) != 1 || got.Kept[0].File != name {
				t.Errorf("uri %q of the file %q: %+v", uri, name, got)
			}
		}
	}
}

// urlPath escapes a path as a URI's path, as a scanner that escapes names writes it.
type urlPath struct{ p string }

func (u *urlPath) escaped() string { return (&url.URL{Path: u.p}).EscapedPath() }

// TestReadKeepsTheScannersOwnFailures: a scanner that could not scan a file the patch wrote
// (bandit skips a file it cannot parse, semgrep one past its size limit or its parser) says so
// in its SARIF (an invocation that was not successful, an error notification naming the file)
// and exits 0 with no result. That read as a clean scan: it is now counted, with the files.
func TestReadKeepsTheScannersOwnFailures(t *testing.T) {
	t.Parallel()
	no := false
	run := map[string]any{"invocations": []any{
		map[string]any{"executionSuccessful": no, "toolExecutionNotifications": []any{
			map[string]any{"level": "error", "message": map[string]any{"text": "syntax error while parsing AST from file"},
				"locations": []any{map[string]any{"physicalLocation": map[string]any{"artifactLocation": map[string]any{"uri": "lib/new.py"}}}}},
			map[string]any{"level": "warning", "message": map[string]any{"text": "slow"}},
			map[string]any{"message": map[string]any{"text": "no level: a warning"}},
		}},
		map[string]any{"executionSuccessful": true, "toolExecutionNotifications": []any{
			map[string]any{"level": "error", "message": map[string]any{"text": "outside"},
				"locations": []any{map[string]any{"physicalLocation": map[string]any{"artifactLocation": map[string]any{"uri": "/etc/passwd"}}}}},
		}},
	}}
	got, err := Read(sarifLog(run), "/workspace", testChanged())
	if err != nil {
		t.Fatal(err)
	}
	if got.Failed != 3 || !reflect.DeepEqual(got.FailedFiles, []string{"lib/new.py"}) {
		t.Fatalf("Read = %+v, want 3 failures (an unsuccessful invocation, two error notifications) naming lib/new.py", got)
	}
	// A run that says it succeeded and has no error is no failure.
	ok, err := Read(sarifLog(map[string]any{"invocations": []any{map[string]any{"executionSuccessful": true}}}), "/workspace", testChanged())
	if err != nil || ok.Failed != 0 || ok.FailedFiles != nil {
		t.Fatalf("a successful run: %+v, %v", ok, err)
	}
}
