package audit

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/gittest"
)

// TestEarlierCommitsFailClosed: what a pull request's earlier commits changed in tests
// is flagged on a follow-up's result. When their diff cannot be read (larger than the bound: a
// vendored folder or a generated file next to an earlier model's conftest.py; or no merge base
// with the base branch), the follow-up must still warn, not report a clean result with a note.
func TestEarlierCommitsFailClosed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	git := gittest.In(t, dir)
	write := func(name string, data []byte) {
		t.Helper()
		gittest.Write(t, dir, map[string]string{name: string(data)})
	}
	git("init", "-q", "-b", "main")
	write("calc.py", []byte("def add(a, b):\n    return a - b\n"))
	git("add", ".")
	git("commit", "-q", "-m", "base")
	base := git("rev-parse", "HEAD")

	git("checkout", "-q", "-b", "frognano/issue-1")
	write("conftest.py", []byte("def pytest_collection_modifyitems(items):\n    items.clear()\n"))
	write("vendor.txt", bytes.Repeat([]byte("a generated line of a vendored dependency\n"), (maxEarlierDiffBytes/42)+1000))
	git("add", ".")
	git("commit", "-q", "-m", "earlier work and a vendored file")
	head := git("rev-parse", "HEAD")

	got, err := EarlierTestInfluences(ctx, dir, base, head)
	if err == nil {
		t.Fatal("a diff over the bound was read")
	}
	var names []string
	for _, i := range got {
		names = append(names, i.Path)
	}
	if !strings.Contains(strings.Join(names, " "), "conftest.py") {
		t.Errorf("over the bound, the earlier conftest.py is not flagged: %q (%v)", names, err)
	}

	git("checkout", "-q", "--orphan", "unrelated")
	git("commit", "-q", "-m", "a history of its own")
	orphan := git("rev-parse", "HEAD")
	got, err = EarlierTestInfluences(ctx, dir, base, orphan)
	if err == nil || len(got) == 0 {
		t.Errorf("with no merge base: %+v, %v; want a warning and the error", got, err)
	}
}
