package githubapp

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp/githubtest"
)

// BenchmarkPublish is one Publish (commit, branch, draft pull request) of a 1-file and of a
// 200-file patch against the fake GitHub, each on a branch of its own. The client's spacing of
// writes runs on a fake clock, so the time is frognano's and the fake's work; writes/op is how
// many writes GitHub is asked for, each of which GitHub asks clients to space by a second.
func BenchmarkPublish(b *testing.B) {
	for _, files := range []int{1, 200} {
		b.Run(fmt.Sprintf("Files%d", files), func(b *testing.B) {
			gh := githubtest.New(b)
			repo := gh.AddRepo(testOwner, testRepo, testFiles)
			gh.AddInstallation(testInstallation, repo)
			clk := newClock()
			app, err := New(Config{AppID: gh.AppID, PrivateKey: gh.PrivateKey, URL: gh.URL, Now: clk.Now, Sleep: clk.Sleep})
			if err != nil {
				b.Fatal(err)
			}
			client, err := app.ForRepo(context.Background(), testInstallation, testOwner, testRepo)
			if err != nil {
				b.Fatal(err)
			}
			dir := filepath.Join(b.TempDir(), "clone")
			head, branch, err := client.Clone(context.Background(), dir)
			if err != nil {
				b.Fatal(err)
			}
			patch := benchPatch(b, dir, files)
			writes := func() int {
				n := 0
				for _, r := range gh.Requests() {
					if r.Method != "GET" && strings.Contains(r.Path, "/repos/") || strings.HasSuffix(r.Path, "git-receive-pack") {
						n++
					}
				}
				return n
			}
			before := writes()
			b.ResetTimer()
			for i := range b.N {
				in := PublishInput{Dir: dir, BaseSHA: head, Branch: fmt.Sprintf("frognano/bench-%d", i), BaseBranch: branch,
					Title: "Bench", Body: "x", Patch: patch, IssueNumber: i + 1}
				if _, err := client.Publish(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(writes()-before)/float64(b.N), "writes/op")
		})
	}
}

// benchPatch is a patch adding n text files of about 1 KB to the clone dir's HEAD.
func benchPatch(b *testing.B, dir string, n int) []byte {
	work := filepath.Join(b.TempDir(), "work")
	git := func(dir string, args ...string) []byte {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("git %v: %v: %s", args, err, stderr.String())
		}
		return out
	}
	git("", "clone", "--quiet", dir, work)
	for i := range n {
		p := filepath.Join(work, "gen", fmt.Sprintf("f%03d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		body := fmt.Sprintf("package gen\n\n// F%d is generated.\n", i) + strings.Repeat(fmt.Sprintf("var v%d = %q\n", i, strings.Repeat("x", 60)), 14)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	git(work, "add", "-A")
	return git(work, "diff", "--cached", "--binary", "HEAD")
}
