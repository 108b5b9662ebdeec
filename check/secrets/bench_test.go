package secrets

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/internal/gittest"
)

// BenchmarkScan scans a patch of 20 new files of 200 lines each (about 200 KB), without and
// with a repository allow-list (which makes Scan translate gitleaks' rules again).
func BenchmarkScan(b *testing.B) {
	files := map[string]string{"README.md": "hello\n"}
	dir, base := gittest.Repo(b, files)
	var body strings.Builder
	for i := range 200 {
		fmt.Fprintf(&body, "def f%d(x):\n    return x * %d  # some ordinary code of a typical patch\n", i, i)
	}
	add := map[string]string{}
	for i := range 20 {
		add[fmt.Sprintf("pkg/m%02d.py", i)] = body.String()
	}
	gittest.Write(b, dir, add)
	gittest.Git(b, dir, "add", "-A")
	diff := []byte(gittest.Git(b, dir, "diff", "--cached", base) + "\n")
	gittest.Git(b, dir, "reset", "-q", "--hard", base)
	gittest.Git(b, dir, "clean", "-qfdx")
	withAllow := gittest.In(b, dir)
	gittest.Write(b, dir, map[string]string{AllowListPath: "[[allowlists]]\npaths = ['''^fixtures/''']\n"})
	gittest.Git(b, dir, "add", "-A")
	withAllow("commit", "-q", "-m", "allow-list")
	allowAt := gittest.Git(b, dir, "rev-parse", "HEAD")
	for _, bc := range []struct{ name, at string }{{"NoAllowList", ""}, {"AllowList", allowAt}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Scan(context.Background(), patch.HostGit(dir), Input{Base: base, Diff: diff, AllowListAt: bc.at}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
