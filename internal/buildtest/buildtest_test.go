package buildtest

import (
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStatic: the executor builds as a static binary (no interpreter: it runs in any image).
func TestStatic(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "frognano-executor")
	if err := Static(out, "github.com/frognano/frognano/cmd/frognano-executor"); err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s asks for a dynamic loader", out)
		}
	}
}

func TestStaticNamesWhatFailed(t *testing.T) {
	t.Parallel()
	err := Static(filepath.Join(t.TempDir(), "x"), "github.com/frognano/frognano/no/such/package")
	if err == nil || !strings.Contains(err.Error(), "building github.com/frognano/frognano/no/such/package") {
		t.Errorf("err = %v", err)
	}
}

// TestOnce: every caller gets the one binary built.
func TestOnce(t *testing.T) {
	t.Parallel()
	build := Once("github.com/frognano/frognano/testdata/hostile/dumpable-executor", "frognano-executor")
	first, second := build(t), build(t)
	if first != second || filepath.Base(first) != "frognano-executor" {
		t.Errorf("paths %q and %q", first, second)
	}
	if st, err := os.Stat(first); err != nil || st.Mode()&0o111 == 0 {
		t.Errorf("%s: %v %v", first, st, err)
	}
}
