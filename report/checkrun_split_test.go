package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/frognano/frognano/check/secrets"
	"github.com/frognano/frognano/internal/secrettest"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/verify"
)

// TestCheckRunRedactsWhatSpansPieces: a private key whose BEGIN line, body lines and END line
// are the names of tests the patch broke (names sort as the patch chooses) is whole only once
// the names are joined; each name alone holds nothing gitleaks' rules find. The check run's
// summary and text are redacted whole, as the pull request's body is: before, they were
// built of pieces redacted one by one and the key was in both.
func TestCheckRunRedactsWhatSpansPieces(t *testing.T) {
	t.Parallel()
	key, body := secrettest.PrivateKey(t)
	lines := strings.Split(key, "\n")
	tests := map[string]verify.Status{}
	var names []string
	for i, l := range lines {
		n := fmt.Sprintf("t%02d %s", i, l)
		names, tests[n] = append(names, n), verify.Fail
	}
	r := &runner.Result{TestCommand: "pytest",
		TestsBefore: testRun(0, nil, ""), TestsAfter: testRun(1, tests, ""),
		Comparison: &verify.Comparison{PerTest: true, Broken: names, AfterFailed: len(names)}}
	for _, n := range names {
		if secrets.Redact(n) != n {
			t.Fatalf("a test name alone is found: %q", n)
		}
	}
	c := Check(r, secrets.Redact)
	for what, s := range map[string]string{"summary": c.Summary, "text": c.Text, "pull request body": PRBody(r, Fit{Redact: secrets.Redact})} {
		if !strings.Contains(s, "t00") {
			t.Fatalf("the %s does not list the tests:\n%s", what, s)
		}
		for _, b := range body[1 : len(body)-1] {
			if strings.Contains(s, b) {
				t.Errorf("the %s holds the key's body line %q:\n%s", what, b, s)
				break
			}
		}
	}
}
