package doctor

import (
	"bytes"
	"testing"
)

func TestAPIAtLeast(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		have string
		want bool
	}{{"1.41", true}, {"1.47", true}, {"1.40", false}, {"1.9", false}, {"2.0", true}, {"", false}, {"x", false}} {
		if got := apiAtLeast(tc.have, minDockerAPI); got != tc.want {
			t.Errorf("apiAtLeast(%q, %s) = %v, want %v", tc.have, minDockerAPI, got, tc.want)
		}
	}
}

func TestWriteOneLinePerCheck(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	failed := Write(&b, []Result{
		pass("database", "PostgreSQL 15.18, migrations applied"),
		fail("model-tools", "no tool call\nin 1.2s", "start vLLM with\n--enable-auto-tool-choice"),
		skip("sandbox", "needs the sandbox image"),
	})
	want := "ok   database     PostgreSQL 15.18, migrations applied\n" +
		"FAIL model-tools  no tool call in 1.2s; fix: start vLLM with --enable-auto-tool-choice\n" +
		"skip sandbox      needs the sandbox image\n"
	if b.String() != want || failed != 1 {
		t.Errorf("Write printed (%d failed):\n%s\nwant:\n%s", failed, b.String(), want)
	}
}
