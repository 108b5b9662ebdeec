package buildtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStaticNamesWhatFailed(t *testing.T) {
	t.Parallel()
	err := Static(filepath.Join(t.TempDir(), "x"), "github.com/frognano/frognano/no/such/package")
	if err == nil || !strings.Contains(err.Error(), "building github.com/frognano/frognano/no/such/package") {
		t.Errorf("err = %v", err)
	}
}

// TestOnce: every caller gets the one binary built. (That Static's binaries are static is
// cmd/frognano-executor's TestStaticStandardLibraryOnly.)
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
