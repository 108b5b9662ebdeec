package secrets

import (
	"context"
	"encoding/base64"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/internal/secrettest"
)

// TestEverythingAllowedIsListed: what the base's allow rules or gitleaks' placeholder
// allow-lists let through does not refuse the patch, and is listed with its reason; the
// patch's own .gitleaksignore counts for nothing.
func TestEverythingAllowedIsListed(t *testing.T) {
	t.Parallel()
	aws, gh := secrettest.AWSKey(t), githubToken(t)
	b := setup(t, map[string]string{
		".gitleaksignore": "# known test keys\nconfig/test.ini:aws-access-token:2\nconfig\\win.ini:aws-access-token:1\nnot a fingerprint\n" +
			"0123456789abcdef0123456789abcdef01234567:config/test.ini:aws-access-token:3\n",
		".gitleaks.toml": "[[allowlists]]\ndescription = \"fixture lines\"\nregexTarget = \"line\"\nregexes = ['''FIXTURE''']\n" +
			"[[allowlists]]\ntargetRules = [\"github-pat\"]\npaths = ['''^docs/''']\n",
		"README.md": "hello\n",
	})
	diff := b.change(t, map[string]string{
		"config/test.ini": "[aws]\nkey = " + aws + "\nother = " + secrettest.AWSKey(t) + "\n", // line 2 ignored, line 3 not
		"config/win.ini":  "key = " + secrettest.AWSKey(t) + "\n",                             // the ignore file wrote it with a backslash
		"app/fixture.py":  "KEY = \"" + secrettest.AWSKey(t) + "\"  # FIXTURE\n",              // the base's line allow-list
		"docs/token.md":   gh + "\n",                                                          // the base's path allow-list for github-pat
		"docs/aws.md":     secrettest.AWSKey(t) + "\n",                                        // ... which allows no other rule
		"app/example.py":  "K = \"AKIA" + secrettest.MadeUp(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 9) + "EXAMPLE\"\n",
		"app/alpha.py":    "T = \"ghp" + "_abcdefghijklmnopqrstuvwxyz0123456789\"\n",
		".gitleaksignore": "app/leak.py:github-pat:1\n",
		"app/leak.py":     "T = \"" + githubToken(t) + "\"\n",
	})
	got := b.result(t, diff)
	want := Result{
		Findings: []Finding{
			{Rule: "github-pat", File: "app/leak.py", Line: 1},
			{Rule: "aws-access-token", File: "config/test.ini", Line: 3},
			{Rule: "aws-access-token", File: "docs/aws.md", Line: 1},
		},
		Allowed: []Finding{
			{Rule: "github-pat", File: "app/alpha.py", Line: 1, Allowed: PlaceholderDefault},
			{Rule: "aws-access-token", File: "app/example.py", Line: 1, Allowed: PlaceholderRule},
			{Rule: "aws-access-token", File: "app/fixture.py", Line: 1, Allowed: ByAllowList},
			{Rule: "aws-access-token", File: "config/test.ini", Line: 2, Allowed: ByIgnore},
			{Rule: "aws-access-token", File: "config/win.ini", Line: 1, Allowed: ByIgnore},
			{Rule: "github-pat", File: "docs/token.md", Line: 1, Allowed: ByAllowList},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("scan:\n got %v\n     %v\nwant %v\n     %v", got.Findings, got.Allowed, want.Findings, want.Allowed)
	}
	var words []string
	for _, f := range got.Allowed {
		words = append(words, f.AllowedBy())
	}
	if w := strings.Join(words, "|"); w != "placeholder value (gitleaks' default allow-list)|placeholder value (gitleaks' rule aws-access-token)|"+
		"allowed by .gitleaks.toml of the base|allowed by .gitleaksignore of the base|allowed by .gitleaksignore of the base|allowed by .gitleaks.toml of the base" {
		t.Errorf("AllowedBy: %s", w)
	}
	for _, f := range append(got.Findings, got.Allowed...) {
		if strings.Contains(f.String(), aws) || strings.Contains(f.String(), gh) || strings.Contains(f.String(), "AKIA") {
			t.Errorf("finding %v holds a value", f)
		}
	}
}

// TestRenamedFileIsComparedWithItsSource: a key the renamed file's source held is already in
// the base; one the rename adds is the patch's.
func TestRenamedFileIsComparedWithItsSource(t *testing.T) {
	t.Parallel()
	old := secrettest.AWSKey(t)
	long := strings.Repeat("some text that makes a rename recognisable\n", 20)
	b := setup(t, map[string]string{"old/creds.txt": long + "k = " + old + "\n"})
	diff := b.change(t, map[string]string{"old/creds.txt": "", "new/creds.txt": long + "k = " + old + "\nj = " + secrettest.AWSKey(t) + "\n"})
	got := b.result(t, diff)
	want := Result{
		Findings: []Finding{{Rule: "aws-access-token", File: "new/creds.txt", Line: 22}},
		Allowed:  []Finding{{Rule: "aws-access-token", File: "new/creds.txt", Line: 21, Allowed: InBase}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("scan: got %+v, want %+v", got, want)
	}
}

// TestBaseValueMovedToAnotherFileIsThePatchs: only the same path (or a rename's source) counts
// as the base: a key copied from one file into a new one is published again, and the patch's.
func TestBaseValueMovedToAnotherFileIsThePatchs(t *testing.T) {
	t.Parallel()
	aws := secrettest.AWSKey(t)
	b := setup(t, map[string]string{"a.txt": "k = " + aws + "\n"})
	got := b.scan(t, b.change(t, map[string]string{"b.txt": "k = " + aws + "\n"}))
	if want := []Finding{{Rule: "aws-access-token", File: "b.txt", Line: 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("findings: got %v, want %v", got, want)
	}
}

// TestOneFindingPerValue: gitleaks' generic rule also matches a key a specific rule names;
// the finding is the specific rule's, once.
func TestOneFindingPerValue(t *testing.T) {
	t.Parallel()
	b := setup(t, readme)
	got := b.scan(t, b.change(t, map[string]string{"a.py": "api_key = \"" + secrettest.AWSKey(t) + "\"\n"}))
	if want := []Finding{{Rule: "aws-access-token", File: "a.py", Line: 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("findings: got %v, want %v", got, want)
	}
}

// TestEncodedKeyInABinaryFile: a whole binary file is read, and gitleaks' decoding finds a key
// written base64-encoded in it.
func TestEncodedKeyInABinaryFile(t *testing.T) {
	t.Parallel()
	b := setup(t, readme)
	enc := base64.StdEncoding.EncodeToString([]byte("token: " + githubToken(t)))
	got := b.scan(t, b.change(t, map[string]string{"assets/blob.dat": "\x00\x01\x02 " + enc + " \x00\xff"}))
	if want := []Finding{{Rule: "github-pat", File: "assets/blob.dat", Line: 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("findings: got %v, want %v", got, want)
	}
}

func TestParseIgnore(t *testing.T) {
	t.Parallel()
	got := parseIgnore([]byte("# comment\n\n  a/b.txt:aws-access-token:3  \r\nwin\\path.ini:github-pat:10\n" +
		"abc:a/b.txt:rule:4\nno-line:rule:\nx:rule:03\nx:rule:-1\n:rule:1\nx::1\nc:d\n"))
	want := map[string]bool{"a/b.txt:aws-access-token:3": true, "win/path.ini:github-pat:10": true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parseIgnore: got %v, want %v", got, want)
	}
	many := strings.Repeat("f:r:1\nf:r:2\n", 10) + strings.Repeat("x", 10)
	if n := len(parseIgnore([]byte(many))); n != 2 {
		t.Errorf("%d fingerprints, want 2", n)
	}
}

// FuzzParseIgnore: whatever the base's .gitleaksignore holds, parseIgnore never panics, and
// every fingerprint it returns is FILE:RULE:LINE with a non-empty file and rule, a line number
// as gitleaks writes it, made from one line of the input.
func FuzzParseIgnore(f *testing.F) {
	f.Add([]byte("# comment\nconfig/test.ini:aws-access-token:2\n"))
	f.Add([]byte("c\\win.ini:github-pat:1\r\n0123:a:b:4\n"))
	f.Add([]byte("a:b:99999999999999999999\n:::\n\x00:\xff:1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for fp := range parseIgnore(b) {
			f := strings.Split(fp, ":")
			if len(f) != 3 || f[0] == "" || f[1] == "" || strings.Contains(f[0], `\`) {
				t.Fatalf("fingerprint %q", fp)
			}
			found := false
			for _, line := range strings.Split(string(b), "\n") {
				if p := strings.Split(strings.TrimSpace(line), ":"); len(p) == 3 && strings.ReplaceAll(p[0], `\`, "/")+":"+p[1]+":"+p[2] == fp {
					found = true
				}
			}
			if !found {
				t.Fatalf("fingerprint %q is no line of the input", fp)
			}
		}
	})
}

// TestGenericMatchIsJudgedAfterTheAllowRules: gitleaks drops a generic rule's match that a
// specific rule's match holds, after its allow-lists. The scan's detector keeps both (its
// generic rules go by other names), so that the preference comes after the scan's own allow
// rules: a generic match whose specific twin was allowed is judged on its own.
func TestGenericMatchIsJudgedAfterTheAllowRules(t *testing.T) {
	t.Parallel()
	set, err := rules()
	if err != nil {
		t.Fatal(err)
	}
	raw := set.detect(context.Background(), "a.py", []byte("api_key = \""+secrettest.AWSKey(t)+"\"\n"))
	var ids []string
	for _, f := range raw {
		ids = append(ids, f.RuleID)
	}
	sort.Strings(ids)
	if !reflect.DeepEqual(ids, []string{"aws-access-token", "generic-api-key"}) {
		t.Fatalf("the detector found %v, want both rules' matches under gitleaks' names", ids)
	}
	all := func(specific, generic Allowance) []judged {
		return []judged{
			{judge: judge{rule: "aws-access-token", line: 1, secret: "AKIA1"}, allowed: specific},
			{judge: judge{rule: "generic-api-key", line: 1, secret: "AKIA1"}, allowed: generic},
		}
	}
	for _, c := range []struct {
		specific, generic Allowance
		genericStands     bool
	}{
		{Refuses, Refuses, false},                // one finding, named by the specific rule
		{PlaceholderRule, Refuses, true},         // the generic rule still refuses the value
		{Refuses, PlaceholderRule, false},        // the specific rule names it, refusing
		{ByAllowList, PlaceholderRule, false},    // both allowed: listed once
		{PlaceholderDefault, ByAllowList, false}, // likewise
	} {
		js := all(c.specific, c.generic)
		if got := js[1].shadowed(js); got == c.genericStands || js[0].shadowed(js) {
			t.Errorf("specific %q, generic %q: generic shadowed %v, want %v", c.specific, c.generic, got, !c.genericStands)
		}
	}
}

// TestScanPastItsTimeIsAnError: a scan stopped by its time limit is an error (the patch is
// then refused under block), never the findings of what it had read so far.
func TestScanPastItsTimeIsAnError(t *testing.T) {
	t.Parallel()
	b := setup(t, readme)
	diff := b.change(t, map[string]string{"a.txt": githubToken(t) + "\n"})
	res, err := Scan(context.Background(), b.git, Input{Base: b.base, Diff: diff, maxTime: time.Nanosecond})
	if err == nil || !strings.Contains(err.Error(), "could not be scanned within 1ns") || res.Findings != nil || res.Allowed != nil {
		t.Fatalf("Scan past its time: %+v, %v; want an error and no result", res, err)
	}
}

// TestBaseAllowListForTheRepositorysOwnRules: a .gitleaks.toml whose allow-lists target rules
// of its own (which the scan does not run) still lets its other allow-lists work, and the scan
// does not fail on it.
func TestBaseAllowListForTheRepositorysOwnRules(t *testing.T) {
	t.Parallel()
	gh := githubToken(t)
	b := setup(t, map[string]string{
		".gitleaks.toml": "[[rules]]\nid = \"acme-token\"\nregex = '''acme_[a-z]{8}'''\n" +
			"[[allowlists]]\ntargetRules = [\"acme-token\"]\npaths = ['''.*''']\n" +
			"[[allowlists]]\ntargetRules = [\"acme-token\", \"github-pat\"]\npaths = ['''^fixtures/''']\n",
		"README.md": "hello\n",
	})
	got := b.result(t, b.change(t, map[string]string{"fixtures/t.txt": gh + "\n", "app/t.txt": gh + "\n"}))
	want := Result{
		Findings: []Finding{{Rule: "github-pat", File: "app/t.txt", Line: 1}},
		Allowed:  []Finding{{Rule: "github-pat", File: "fixtures/t.txt", Line: 1, Allowed: ByAllowList}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("scan: got %+v, want %+v", got, want)
	}
}
