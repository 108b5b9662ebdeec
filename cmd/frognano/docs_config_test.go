package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/frognano/frognano/config"
	"github.com/frognano/frognano/runner/leaf"
)

// What the documents say about frognano's settings, read the way an operator reads them, so
// that TestDocumentedDefaults can hold each statement against the code (docs_defaults_test.go).

// repoRoot is the module's root, from this package's folder.
const repoRoot = "../.."

// docFiles are the documents an operator reads for settings and their defaults: these, and
// every document under docs/ (docsDocuments), so that a table or a default moved into a new
// document is still checked.
var docFiles = append([]string{"README.md", "CONTRIBUTING.md", "deploy/sandbox/README.md", "docker-compose.yml",
	"deploy/systemd/frognano.service", "deploy/systemd/frognano-docker-proxy.service"}, docsDocuments()...)

// docsDocuments are the markdown documents under docs/, each as a path from the repository's
// root. The configuration table lives there (docs/configuration.md), so settingsTables fails
// when it finds none.
func docsDocuments() []string {
	m, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		panic(err) // only a malformed pattern
	}
	out := make([]string, len(m))
	for i, f := range m {
		out[i] = "docs/" + filepath.Base(f)
	}
	return out
}

// docRow is one row of a settings table: the variables of its first cell, and its default
// cell when the table has a "default" column.
type docRow struct {
	where      string // file:line
	vars       []string
	def        string
	hasDefault bool
}

// docVarRE is a variable as the tables name them: `FROGNANO_…`, `GITHUB_…` or `DATABASE_URL`.
var docVarRE = regexp.MustCompile("`((?:FROGNANO|GITHUB)_[A-Z0-9_]+|DATABASE_URL)`")

// settingsTables reads every table of the markdown documents whose first column is "variable".
func settingsTables(t *testing.T) []docRow {
	t.Helper()
	var rows []docRow
	for _, name := range docFiles {
		if !strings.HasSuffix(name, ".md") {
			continue
		}
		defCol := -1
		inTable := false
		for i, line := range strings.Split(readDoc(t, name), "\n") {
			if !strings.HasPrefix(line, "|") {
				inTable = false
				continue
			}
			cells := tableCells(line)
			switch {
			case !inTable && len(cells) > 0 && cells[0] == "variable":
				inTable, defCol = true, -1
				for j, c := range cells {
					if c == "default" {
						defCol = j
					}
				}
				continue
			case !inTable || strings.HasPrefix(cells[0], "---"):
				continue
			}
			r := docRow{where: fmt.Sprintf("%s:%d", name, i+1)}
			for _, m := range docVarRE.FindAllStringSubmatch(cells[0], -1) {
				r.vars = append(r.vars, m[1])
			}
			if len(r.vars) == 0 {
				t.Errorf("%s: a settings row names no variable: %q", r.where, cells[0])
				continue
			}
			if defCol >= 0 && defCol < len(cells) {
				r.def, r.hasDefault = cells[defCol], true
			}
			rows = append(rows, r)
		}
	}
	if len(rows) < 40 {
		t.Fatalf("read %d settings rows from %v; docs/configuration.md's table alone has more", len(rows), docFiles)
	}
	return rows
}

// tableCells splits a markdown table row, keeping escaped pipes (\|) inside their cell.
func tableCells(line string) []string {
	line = strings.ReplaceAll(strings.Trim(strings.TrimSpace(line), "|"), `\|`, "\x00")
	cells := strings.Split(line, "|")
	for i, c := range cells {
		cells[i] = strings.ReplaceAll(strings.TrimSpace(c), "\x00", "|")
	}
	return cells
}

// proseDefault is a default stated in running text: "`VAR` (default 4 GiB each)", "`VAR`,
// default 100", "`VAR` (15 minutes)", "VAR is true (the default)".
type proseDefault struct {
	where string
	name  string
	doc   string // as written
	value string // as an environment variable would say it: 4GiB, 15m, 100, bridge
}

var (
	proseName  = "`(?:[^`\\s]*[^A-Z0-9_`\\s])?([A-Z][A-Z0-9_]*_[A-Z0-9_]+|[A-Z]{4,})`" // `VAR`, `127.0.0.1:VAR`
	proseValue = "(`[^`]+`|\\d+(?:,\\d{3})*(?:\\.\\d+)?(?: ?(?:GiB|MiB|KiB|minutes|minute|min|seconds|s|hours|h)\\b)?)"
	proseREs   = []*regexp.Regexp{
		// "`VAR` (default X", "`VAR`, default X", "`VAR` per pull request, default X"
		regexp.MustCompile(proseName + "[^`.;|]{0,40}?\\bdefault:? " + proseValue),
		// "`VAR` (X)" and "`VAR`, X," with X a quantity
		regexp.MustCompile(proseName + "(?: \\(|, )(\\d+(?:,\\d{3})*(?: ?(?:GiB|MiB|KiB|minutes|min|s|h)\\b))[,)]"),
		// "VAR is true (the default)", as comments of the deployment files say it
		regexp.MustCompile("`?([A-Z][A-Z0-9_]*_[A-Z0-9_]+)`? is (\\w+) \\(the default\\)"),
	}
	thousandsRE = regexp.MustCompile(`(\d),(\d{3})`)
	unitRE      = regexp.MustCompile(`^(\d+(?:\.\d+)?) ?(GiB|MiB|KiB|minutes|minute|min|seconds|s|hours|h)$`)
)

// proseDefaults finds every default stated in the documents' text, and in their tables' cells,
// which may state another variable's default in passing.
func proseDefaults(t *testing.T) []proseDefault {
	t.Helper()
	var out []proseDefault
	for _, name := range docFiles {
		text := readDoc(t, name)
		if !strings.HasSuffix(name, ".md") {
			text = commentLines(text)
		}
		// Paragraphs are wrapped: a statement may span lines. Each match is located by the
		// line its variable starts on.
		flat := strings.ReplaceAll(text, "\n", " ") // same offsets, so each match has its line
		for _, re := range proseREs {
			for _, m := range re.FindAllStringSubmatchIndex(flat, -1) {
				line := strings.Count(text[:m[0]], "\n") + 1
				p := proseDefault{where: fmt.Sprintf("%s:%d", name, line), name: flat[m[2]:m[3]], doc: flat[m[4]:m[5]]}
				p.value = envValue(p.doc)
				out = append(out, p)
			}
		}
	}
	if len(out) < 15 {
		t.Fatalf("found %d defaults in the documents' text; there are more", len(out))
	}
	return out
}

// commentLines keeps the comments of a YAML or unit file (what a reader reads as prose),
// blanking the rest so that line numbers stay.
func commentLines(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if _, c, ok := strings.Cut(l, "# "); ok {
			lines[i] = c
		} else {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// envValue turns a value as prose writes it into one the variable accepts: `bridge` → bridge,
// 65,536 → 65536, 4 GiB → 4GiB, 15 minutes → 15m, 120 s → 120s.
func envValue(doc string) string {
	v := strings.Trim(doc, "`")
	v = thousandsRE.ReplaceAllString(v, "$1$2")
	v = thousandsRE.ReplaceAllString(v, "$1$2") // again: 1,000,000's matches overlap
	if m := unitRE.FindStringSubmatch(v); m != nil {
		unit := map[string]string{"minutes": "m", "minute": "m", "min": "m", "seconds": "s", "hours": "h"}[m[2]]
		if unit == "" {
			unit = m[2]
		}
		v = m[1] + unit
	}
	return v
}

// scriptDefaults are the defaults the deployment's scripts, Makefile, Dockerfiles and compose
// file give the variables they read: ${VAR:-X}, VAR ?= X, ARG VAR=X.
func scriptDefaults(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	res := []*regexp.Regexp{
		regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]*):-([^}]*)\}`),
		regexp.MustCompile(`(?m)^([A-Z][A-Z0-9_]*) \?= (.*)$`),
		regexp.MustCompile(`(?m)^ARG ([A-Z][A-Z0-9_]*)=(.*)$`),
	}
	var files []string
	for _, pattern := range []string{"Makefile", "Dockerfile", "docker-compose.yml", "deploy/*.sh", "deploy/*/*.sh", "deploy/*/Dockerfile"} {
		m, err := filepath.Glob(filepath.Join(repoRoot, pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, re := range res {
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				out[m[1]] = append(out[m[1]], strings.Trim(m[2], `"`))
			}
		}
	}
	if len(out["FROGNANO_SETUP_NETWORK"]) == 0 || len(out["GO_IMAGE"]) == 0 {
		t.Fatalf("read no ${VAR:-default} from docker-compose.yml or the Dockerfile: %v", out)
	}
	return out
}

func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docsEnv loads the service's configuration the way `frognano serve` does, from a minimal
// valid environment plus what a check sets, and records every variable the code reads.
type docsEnv struct {
	base map[string]string
}

func newDocsEnv(t *testing.T) docsEnv {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return docsEnv{base: map[string]string{
		"DATABASE_URL":           "postgres://frognano@127.0.0.1:1/frognano?sslmode=disable",
		"GITHUB_WEBHOOK_SECRET":  "docs-secret-5e0c1f9a",
		"GITHUB_APP_ID":          "424242",
		"GITHUB_APP_PRIVATE_KEY": string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})),
	}}
}

// load returns the configuration of the base environment with set applied ("" removes a
// variable), and the names it read.
func (d docsEnv) load(set map[string]string, withWeb bool) (config.Service, map[string]bool, error) {
	env := map[string]string{}
	for k, v := range d.base {
		env[k] = v
	}
	for k, v := range set {
		if v == "" {
			delete(env, k)
		} else {
			env[k] = v
		}
	}
	read := map[string]bool{}
	cfg, err := config.LoadService(func(k string) string { read[k] = true; return env[k] }, withWeb)
	return cfg, read, err
}

// configView is a configuration reflect.DeepEqual can compare: the limiters are their sizes,
// and the redactor's function is whether there is one.
type configView struct {
	Config                   config.Service
	ModelSlots, SandboxSlots int
	NamedModelSlots          []int
	SecretValues             bool
}

func viewOf(cfg config.Service) configView {
	v := configView{SandboxSlots: cfg.Runner.Sandbox.Slots.Cap(), SecretValues: cfg.Runner.SecretValues != nil}
	// leaf.Limiter does not say its size; its slots are a buffered channel.
	slots := func(l *leaf.Limiter) int {
		if l == nil {
			return 0
		}
		return reflect.ValueOf(l).Elem().FieldByName("slots").Cap()
	}
	v.ModelSlots = slots(cfg.Runner.Attempts.ModelLimiter)
	if m := cfg.Runner.Models; m != nil { // each named model's limiter, by its size
		cp := *m
		cp.Servers = slices.Clone(m.Servers)
		for i := range cp.Servers {
			v.NamedModelSlots = append(v.NamedModelSlots, slots(cp.Servers[i].Limiter))
			cp.Servers[i].Limiter = nil
		}
		cfg.Runner.Models = &cp
	}
	cfg.Runner.Attempts.ModelLimiter, cfg.Runner.Sandbox.Slots, cfg.Runner.SecretValues = nil, nil, nil
	v.Config = cfg
	return v
}

// firstDiff names the first field where a and b differ, with both values.
func firstDiff(path string, a, b reflect.Value) string {
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			if d := firstDiff(path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Pointer:
		if !a.IsNil() && !b.IsNil() {
			return firstDiff(path, a.Elem(), b.Elem())
		}
	}
	if as, bs := fmt.Sprintf("%#v", a), fmt.Sprintf("%#v", b); as != bs {
		return fmt.Sprintf("%s: %s, not %s", strings.TrimPrefix(path, "."), as, bs)
	}
	return ""
}

// sortedKeys is m's keys in order, for stable messages.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
