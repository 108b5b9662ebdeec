package egress

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/frognano/frognano/runner/executor"
	"github.com/frognano/frognano/runner/sandbox"
)

// question is an observer key for name and type, built by the DNS library the way a resolver
// would send it (with an EDNS record when edns), minus the id and flags.
func question(t testing.TB, name string, typ dnsmessage.Type, edns bool) []byte {
	t.Helper()
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{RecursionDesired: true})
	if err := b.StartQuestions(); err != nil {
		t.Fatal(err)
	}
	if err := b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: typ, Class: dnsmessage.ClassINET}); err != nil {
		t.Fatal(err)
	}
	if edns {
		if err := b.StartAdditionals(); err != nil {
			t.Fatal(err)
		}
		var rh dnsmessage.ResourceHeader
		if err := rh.SetEDNS0(1232, dnsmessage.RCodeSuccess, false); err != nil {
			t.Fatal(err)
		}
		if err := b.OPTResource(rh, dnsmessage.OPTResource{}); err != nil {
			t.Fatal(err)
		}
	}
	msg, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return msg[4:]
}

func TestParseQuestion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		q    []byte
		want string
		typ  uint16
	}{
		{"Plain", question(t, "files.pkgs.invalid.", dnsmessage.TypeA, false), "files.pkgs.invalid", 1},
		{"UpperCaseAndEDNS", question(t, "Files.PKGS.invalid.", dnsmessage.TypeAAAA, true), "files.pkgs.invalid", 28},
		{"Markup", question(t, "<img>`x`.pkgs.invalid.", dnsmessage.TypeA, false), `\x3cimg\x3e\x60x\x60.pkgs.invalid`, 1},
		{"Control", question(t, "a\x00\u202e.invalid.", dnsmessage.TypeA, false), `a\x00\xe2\x80\xae.invalid`, 1},
		{"Empty", nil, "", 0},
		{"HeaderOnly", []byte{0, 1, 0, 0, 0, 0, 0, 0}, "", 0},
		{"CutName", question(t, "files.pkgs.invalid.", dnsmessage.TypeA, false)[:14], "", 0},
		{"CompressionLoop", []byte{0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1}, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, typ := parseQuestion(tt.q)
			if got != tt.want || typ != tt.typ {
				t.Errorf("parseQuestion = %q, %d; want %q, %d", got, typ, tt.want, tt.typ)
			}
		})
	}
}

func FuzzParseQuestion(f *testing.F) {
	f.Add(question(f, "files.pkgs.invalid.", dnsmessage.TypeA, true))
	f.Add(question(f, "x.invalid.", dnsmessage.TypeAAAA, false))
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1})
	f.Add([]byte{0, 2, 0, 0, 0, 0, 0, 0, 63})
	f.Fuzz(func(t *testing.T, q []byte) {
		name, _ := parseQuestion(q)
		if len(name) > maxName+4 {
			t.Fatalf("name of %d bytes", len(name))
		}
		for _, c := range []byte(name) {
			ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte(`-_.*\`, c) >= 0
			if !ok {
				t.Fatalf("name %q holds byte %q", name, c)
			}
		}
	})
}

func TestCommandWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		command string
		want    []string
	}{
		{"pip install somepkg", []string{"pip"}},
		{"cd web && npm install; cargo build | tee log", []string{"cd", "npm", "cargo", "tee"}},
		{"FOO=1 BAR=2 go test ./...", []string{"go"}},
		{"sudo -E env X=1 timeout 30 yarn", []string{"yarn"}},
		{"echo 'npm install'", []string{"echo"}},
		{"echo 'curl: (6) Could not; resolve' && echo \"a | b\" \\; x; exit 127", []string{"echo", "exit"}},
		{"./node_modules/.bin/jest", nil},
		{"(npx jest)\n`gofmt -l .`", []string{"npx", "gofmt"}},
		{"if true; then rustc x.rs; fi", []string{"if", "rustc", "fi"}},
	}
	for _, tt := range tests {
		if got := commandWords(tt.command); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("commandWords(%q) = %q, want %q", tt.command, got, tt.want)
		}
	}
}

// TestSnippetsAreTheDocumentedOnes: the setup snippets the report suggests are
// docs/environments.md's examples, byte for byte, so that advice never drifts from what the
// documentation (and, for Python and Go, the test suite) says works.
func TestSnippetsAreTheDocumentedOnes(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "environments.md"))
	if err != nil {
		t.Fatal(err)
	}
	for eco, s := range Snippets {
		if !strings.Contains(string(doc), "```sh\n"+s+"```\n") {
			t.Errorf("the %s snippet is not a block of docs/environments.md", eco)
		}
	}
}

func code(n int) *int { return &n }

// TestAnalyze: names merged across types and case, counts per call, command-not-found only for
// a command the PATH check found missing, and advice from the tools that tried, else from the
// base's files.
func TestAnalyze(t *testing.T) {
	t.Parallel()
	keys := []executor.ObservedQuestion{
		{Question: question(t, "files.pkgs.invalid.", dnsmessage.TypeA, true), Queries: 6, Lookups: 3},
		{Question: question(t, "files.pkgs.invalid.", dnsmessage.TypeAAAA, true), Queries: 6, Lookups: 3},
		{Question: question(t, "FILES.pkgs.invalid.", dnsmessage.TypeA, false), Queries: 1, Lookups: 1},
		{Question: question(t, "other.invalid.", dnsmessage.TypeA, false), Queries: 2, Lookups: 1},
		{Question: []byte{1, 2, 3}, Queries: 1, Lookups: 1},
	}
	rep := sandbox.NetworkReport{Observed: true, Observer: executor.ObserverReport{
		ObserverMark: executor.ObserverMark{Queries: 16, Lookups: 9, NoRoute: 2}, Keys: keys}}
	rep.Calls = []sandbox.BashCall{
		{Command: "ls", ExitCode: code(0), Observed: true},
		{Command: "pip install somepkg", ExitCode: code(1), Observed: true, Lookups: 6, Questions: []int{0, 1}},
		{Command: "python3 x.py\nmore", ExitCode: code(1), Observed: true, Lookups: 1, NoRoute: 2, Questions: []int{3, 4}},
		{Command: "npm install", ExitCode: code(127), Observed: true},
		{Command: "echo npm; exit 127", ExitCode: code(127), Observed: true},
		{Command: "node x.js", ExitCode: code(127), Observed: true},
	}
	if got := NotFoundCandidates(rep.Calls); !reflect.DeepEqual(got, []string{"npm", "echo", "exit", "node"}) {
		t.Errorf("candidates %q", got)
	}
	r := Analyze(rep, Input{Missing: []string{"npm"}, Files: []string{"requirements.txt", "package.json"}})
	wantHosts := []Host{{Name: "files.pkgs.invalid", Lookups: 4, Queries: 13}, {Name: "other.invalid", Lookups: 1, Queries: 2}}
	if !reflect.DeepEqual(r.Hosts, wantHosts) {
		t.Errorf("hosts %+v, want %+v", r.Hosts, wantHosts)
	}
	if len(r.Calls) != 3 || r.Calls[0].Tool != "pip" || r.Calls[1].Command != "python3 x.py …" || r.Calls[2].NotFound != "npm" {
		t.Fatalf("calls %+v", r.Calls)
	}
	if !reflect.DeepEqual(r.Calls[0].Hosts, []string{"files.pkgs.invalid"}) || !reflect.DeepEqual(r.Calls[1].Hosts, []string{"other.invalid"}) {
		t.Errorf("call hosts %q, %q", r.Calls[0].Hosts, r.Calls[1].Hosts)
	}
	if len(r.Missing) != 1 || r.Missing[0] != (Missing{Command: "npm", Toolchain: Node, Calls: 1}) {
		t.Errorf("missing %+v", r.Missing)
	}
	var ecos []string
	for _, a := range r.Advice {
		ecos = append(ecos, a.Ecosystem)
	}
	if !reflect.DeepEqual(ecos, []string{Node, Python}) || !r.Advice[0].Image || r.Advice[1].Setup != Snippets[Python] ||
		r.Advice[1].Why != "pip tried to reach the network; the repository has requirements.txt" {
		t.Errorf("advice %+v", r.Advice)
	}

	// Tries from no known tool: the files name the ecosystems.
	rep.Calls = []sandbox.BashCall{{Command: "python3 x.py", ExitCode: code(1), Observed: true, Lookups: 2}}
	r = Analyze(rep, Input{Files: []string{"go.mod"}})
	if len(r.Advice) != 1 || r.Advice[0].Ecosystem != Go || r.Advice[0].Why != "the repository has go.mod" {
		t.Errorf("advice from files %+v", r.Advice)
	}
}

// TestHonestRunSaysNothing: no lookup, no route, no command not found: nothing to report.
func TestHonestRunSaysNothing(t *testing.T) {
	t.Parallel()
	rep := sandbox.NetworkReport{Observed: true, Calls: []sandbox.BashCall{
		{Command: "python3 -m pytest -q", ExitCode: code(1), Observed: true},
		{Command: "grep -rn foo .", ExitCode: code(1), Observed: true},
	}}
	if r := Analyze(rep, Input{Files: []string{"requirements.txt"}}); !r.Empty() || len(r.Advice) != 0 || len(r.Calls) != 0 {
		t.Errorf("an honest run reports %+v", r)
	}
}
