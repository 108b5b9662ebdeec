package patch

import (
	"bytes"
	"crypto/rand"
	"os/exec"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/gittest"
)

// TestBinaryInflationIsBounded: a few KiB of patch can describe a huge file, which git would
// build in memory on the host. Both of git's ways are refused past MaxBinaryBytes: a literal
// that declares a GiB, and a real delta git makes of a 64 KiB base repeated into 32 MiB (the
// delta is small; its header says what it makes). A small binary file still passes.
func TestBinaryInflationIsBounded(t *testing.T) {
	t.Parallel()
	block := make([]byte, 64<<10)
	if _, err := rand.Read(block); err != nil {
		t.Fatal(err)
	}
	dir, base := gittest.Repo(t, map[string]string{"data.bin": string(block), "small.bin": "\x00\x01\x02"})
	gittest.Write(t, dir, map[string]string{"data.bin": strings.Repeat(string(block), 512), "small.bin": "\x00\x01\x02\x03"})
	cmd := exec.Command("git", "-C", dir, "diff", "--binary", base, "--", "data.bin")
	bomb, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(bomb, []byte("\ndelta ")) || len(bomb) > 1<<20 {
		t.Fatalf("git made no small delta (%d bytes):\n%.300s", len(bomb), bomb)
	}
	small, err := exec.Command("git", "-C", dir, "diff", "--binary", base, "--", "small.bin").Output()
	if err != nil {
		t.Fatal(err)
	}
	literal := "diff --git a/big.bin b/big.bin\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..bf6d57393559faaa4208ed47fd08a276327683d1\n" +
		"GIT binary patch\nliteral 1000000000\nzc-rj20RaF20DzGGukHv6000000000000000000000000000000000000000000000\n\nliteral 0\nHcmV?d00001\n\n"
	for name, diff := range map[string][]byte{"Delta": bomb, "Literal": []byte(literal)} {
		_, err := Sanitize(diff, Options{})
		if err == nil || !strings.Contains(err.Error(), "once git inflates it") {
			t.Errorf("%s: %d-byte patch: err %v, want it refused for what git would inflate", name, len(diff), err)
		}
	}
	if _, err := Sanitize(small, Options{}); err != nil {
		t.Errorf("a 4-byte binary change is refused: %v", err)
	}
}
