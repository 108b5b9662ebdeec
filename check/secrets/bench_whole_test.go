package secrets

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/internal/gittest"
)

// codeLines is n lines of ordinary source code, none of which any rule takes for a secret.
func codeLines(n, seed int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("def f%d_%d(x):  # an ordinary line of a typical source file, seed %d\n    return x * %d", seed, i, seed, i)
	}
	return lines
}

// benchDiff commits base, writes change over it and returns `git diff --binary` of the change,
// as the runner takes it from the sandbox.
func benchDiff(b *testing.B, base, change map[string]string) (dir, commit string, diff []byte) {
	b.Helper()
	dir, commit = gittest.Repo(b, base)
	gittest.Write(b, dir, change)
	gittest.Git(b, dir, "add", "-A")
	diff, err := exec.Command("git", "-C", dir, "diff", "--cached", "--binary", commit).Output()
	if err != nil {
		b.Fatal(err)
	}
	gittest.Git(b, dir, "reset", "-q", "--hard", commit)
	return dir, commit, diff
}

// BenchmarkScanWholeFiles measures what reading the published files whole costs (issue 28):
// a patch changing one line in each of 50 files of 400 lines (about 1.7 MB of files), a patch
// adding 50 such files, a 20 MiB text file with one line changed, and a 7 MiB binary file with
// a few bytes changed: a real run's patch.Sanitize refuses a binary change git would inflate
// past 16 MiB, counting both of the directions `git diff --binary` writes, so a changed binary
// file of 20 MiB, or of 8 MiB, never reaches the scan. Run the same benchmark
// on the per-hunk scan before it to get what the whole-file scan adds.
func BenchmarkScanWholeFiles(b *testing.B) {
	scan := func(b *testing.B, dir, base string, diff []byte) {
		b.SetBytes(int64(len(diff)))
		for b.Loop() {
			if _, err := Scan(context.Background(), patch.HostGit(dir), Input{Base: base, Diff: diff, AllowListAt: base}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("50FilesOneLineEach", func(b *testing.B) {
		base, change := map[string]string{}, map[string]string{}
		for i := range 50 {
			lines := codeLines(400, i)
			base[fmt.Sprintf("pkg/m%02d.py", i)] = strings.Join(lines, "\n") + "\n"
			lines[200] = "    return x + 1  # changed"
			change[fmt.Sprintf("pkg/m%02d.py", i)] = strings.Join(lines, "\n") + "\n"
		}
		dir, commit, diff := benchDiff(b, base, change)
		scan(b, dir, commit, diff)
	})
	b.Run("50NewFiles", func(b *testing.B) {
		change := map[string]string{}
		for i := range 50 {
			change[fmt.Sprintf("pkg/m%02d.py", i)] = strings.Join(codeLines(400, i), "\n") + "\n"
		}
		dir, commit, diff := benchDiff(b, map[string]string{"README.md": "hello\n"}, change)
		scan(b, dir, commit, diff)
	})
	b.Run("Text20MiBOneLine", func(b *testing.B) {
		lines := codeLines(20<<20/110, 1)
		base := strings.Join(lines, "\n") + "\n"
		lines[len(lines)/2] = "    return x + 1  # changed"
		dir, commit, diff := benchDiff(b, map[string]string{"data/big.py": base}, map[string]string{"data/big.py": strings.Join(lines, "\n") + "\n"})
		b.ReportMetric(float64(len(base))/(1<<20), "MiB")
		scan(b, dir, commit, diff)
	})
	b.Run("Binary7MiBFewBytes", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(1, 2))
		blob := make([]byte, 7<<20)
		for i := range blob {
			blob[i] = byte(rng.UintN(256))
		}
		changed := append([]byte{}, blob...)
		copy(changed[len(changed)/2:], "changed")
		dir, commit, diff := benchDiff(b, map[string]string{"data/big.bin": string(blob)}, map[string]string{"data/big.bin": string(changed)})
		if _, err := patch.Sanitize(diff, patch.Options{}); err != nil {
			b.Fatalf("a real run would refuse this patch: %v", err)
		}
		scan(b, dir, commit, diff)
	})
}
