package web

import (
	"context"
	"html"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
)

var problem = regexp.MustCompile(`(?s)<p class="problem">(.*?)</p>`)

// TestRunPageGivesTheRefusalsReason: the run page of a run GitHub refused shows its reason
// exactly as the status comment gives it (issue 18 section 2). The reasons are the ones the
// queue's refusal tests produce against the fake GitHub and check against the comment
// (testdata/golden/queue-refused-*.txt); cmd/frognano's TestRunsShowGivesTheRefusalsReason
// checks `frognano runs show` against the same files.
func TestRunPageGivesTheRefusalsReason(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "golden", "queue-refused-*.txt"))
	if err != nil || len(files) < 10 {
		t.Fatalf("%d refusal reasons (%v), want the queue's", len(files), err)
	}
	b := setup(t)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		reason := strings.TrimSuffix(string(raw), "\n")
		id := b.run(t, seedRun{Owner: "octo", Repo: "pager", State: run.StateFailed, ExitReason: run.ExitGitHubRefused})
		if _, err := b.pool.Exec(context.Background(), `UPDATE runs SET error = $2 WHERE id = $1`, id, reason); err != nil {
			t.Fatal(err)
		}
		resp := b.get(t, "/runs/"+itoa(id), "alice")
		page, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", f, resp.StatusCode, err)
		}
		m := problem.FindSubmatch(page)
		if m == nil {
			t.Errorf("%s: the run page shows no reason", filepath.Base(f))
			continue
		}
		if shown := html.UnescapeString(string(m[1])); shown != reason {
			t.Errorf("%s: the run page shows\n%s\nwant the comment's reason\n%s", filepath.Base(f), shown, reason)
		}
	}
}
