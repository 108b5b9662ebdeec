package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/frognano/frognano/config"
	"github.com/frognano/frognano/dockerproxy"
	"github.com/frognano/frognano/githubapp"
	envpkg "github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/sandbox"
)

// TestDocumentedDefaults holds what the documents say of frognano's settings against the one
// list of them, package config's declarations (config.Vars), and against the code, so that
// they cannot drift apart (issues 18 and 29):
//   - every variable of a settings table (docs/configuration.md, docs/operations.md's sign-in)
//     is declared, and every declared variable is in a settings table; every FROGNANO_* or
//     GITHUB_* name `frognano serve` reads, or that the module's code spells, is declared and
//     documented, or listed below with a reason;
//   - a table's default cell is the declared one, word for word. Written as a value, the
//     variable's own parser reads it as exactly its declared default (Var.IsDefault), and set
//     explicitly it gives exactly the configuration that leaving it unset gives; written as
//     words ("(required)", "the host name", an empty cell), describedDefaults checks what the
//     words say;
//   - so does every default stated in the documents' text ("`FROGNANO_SETUP_TIMEOUT` (15
//     minutes)"), or, for a variable only the deployment's scripts read, it is their default;
//   - docker-compose.yml's ${FROGNANO_…:-X} defaults, and deploy/github-app/manifest.json
//     against the manifest `frognano setup` makes.
func TestDocumentedDefaults(t *testing.T) {
	t.Parallel()
	c := newDocsCheck(t)
	rows := settingsTables(t)
	documented := map[string]string{} // variable → where
	for _, r := range rows {
		for _, v := range r.vars {
			documented[v] = r.where
		}
	}

	t.Run("TableDefaults", func(t *testing.T) {
		for _, r := range rows {
			for _, v := range r.vars {
				d, ok := config.Lookup(v)
				switch {
				case !ok:
					t.Errorf("%s documents %s, which package config does not declare", r.where, v)
					continue
				case !r.hasDefault:
					continue
				case r.def != d.Default:
					t.Errorf("%s: %s's default reads %q; package config declares %q", r.where, v, r.def, d.Default)
					continue
				}
				if m := literalRE.FindStringSubmatch(r.def); m != nil {
					if err := d.IsDefault(m[1]); err != nil {
						t.Errorf("%s: %s's documented default %s: %v", r.where, v, r.def, err)
					}
					c.sameAsUnset(t, r.where, v, m[1])
					continue
				}
				if check, ok := describedDefaults[v]; ok {
					check(t, c)
				} else {
					t.Errorf("%s: %s's default %q is not a value; add it to describedDefaults with a check", r.where, v, r.def)
				}
			}
		}
		for name := range describedDefaults {
			if d, ok := config.Lookup(name); !ok || literalRE.MatchString(d.Default) {
				t.Errorf("describedDefaults checks %s, whose declared default is not words (%q, declared %v)", name, d.Default, ok)
			}
		}
	})

	t.Run("ProseDefaults", func(t *testing.T) {
		scripts := scriptDefaults(t)
		found := map[string]bool{}
		for _, p := range proseDefaults(t) {
			found[p.name] = true
			d, declared := config.Lookup(p.name)
			switch {
			case declared:
				if literalRE.MatchString(d.Default) {
					if err := d.IsDefault(p.value); err != nil {
						t.Errorf("%s: %s's default is stated as %s: %v", p.where, p.name, p.doc, err)
					}
				}
				c.sameAsUnset(t, p.where, p.name, p.value)
			case slices.Contains(scripts[p.name], p.value):
			case proseExceptions[p.name] != "":
			case len(scripts[p.name]) > 0:
				t.Errorf("%s: %s's default is %s; the scripts that read it say %q", p.where, p.name, p.doc, scripts[p.name])
			default:
				t.Errorf("%s: %s (default %s) is read by neither frognano nor the deployment's scripts", p.where, p.name, p.doc)
			}
		}
		// The statements the issue names: if the patterns stop finding them, they check nothing.
		for _, name := range []string{"FROGNANO_ENV_CACHE_SIZE", "FROGNANO_SETUP_TIMEOUT", "FROGNANO_SETUP_DISK", "FROGNANO_SANDBOX_MEMORY",
			"FROGNANO_SANDBOX_TMPFS", "FROGNANO_CI_FOLLOWUPS", "FROGNANO_MAX_STEPS", "FROGNANO_RUN_TIMEOUT", "FROGNANO_AUTO_MIGRATE", "GO_IMAGE"} {
			if !found[name] {
				t.Errorf("no default of %s found in the documents' text", name)
			}
		}
		// "a 64 GiB host at 4 GiB: 15" (docs/operations.md) is the default's formula at work.
		m := regexp.MustCompile(`a (\d+) GiB host at (\d+) GiB: (\d+)`).FindStringSubmatch(readDoc(t, "docs/operations.md"))
		if m == nil {
			t.Fatal("docs/operations.md no longer gives the FROGNANO_MAX_SANDBOXES example")
		}
		host, _ := strconv.ParseInt(m[1], 10, 64)
		mem, _ := strconv.ParseInt(m[2], 10, 64)
		if got := config.DefaultMaxSandboxes(host<<30, mem<<30); strconv.Itoa(got) != m[3] {
			t.Errorf("docs/operations.md: a %s GiB host at %s GiB keeps %s sandboxes; the code says %d", m[1], m[2], m[3], got)
		}
	})

	t.Run("EveryVariableDocumented", func(t *testing.T) {
		names := map[string]string{}
		for _, v := range config.Vars() {
			names[v.Name] = "declared by package config"
		}
		for name := range c.read {
			if _, ok := config.Lookup(name); !ok {
				t.Errorf("`frognano serve` reads %s, which package config does not declare", name)
			}
		}
		for name, file := range codeNames(t) {
			if _, ok := names[name]; !ok {
				names[name] = "spelled in " + file
			}
		}
		for _, name := range sortedKeys(names) {
			_, doc := documented[name]
			reason, listed := notSettings[name]
			_, declared := config.Lookup(name)
			switch {
			case declared && listed:
				t.Errorf("%s is declared by package config and listed in notSettings (%q): which is it?", name, reason)
			case doc && listed:
				t.Errorf("%s is documented at %s and listed in notSettings (%q): which is it?", name, documented[name], reason)
			case !doc && !listed:
				t.Errorf("%s (%s) is in no settings table of the documents", name, names[name])
			case doc && !declared:
				t.Errorf("%s is documented at %s but package config does not declare it (%s)", name, documented[name], names[name])
			}
		}
		for name := range notSettings {
			if _, ok := names[name]; !ok {
				t.Errorf("notSettings lists %s, which the code no longer has", name)
			}
		}
	})

	t.Run("Compose", func(t *testing.T) {
		compose := readDoc(t, "docker-compose.yml")
		n := 0
		for _, m := range regexp.MustCompile(`\$\{((?:FROGNANO|GITHUB)_[A-Z0-9_]+):-([^}]*)\}`).FindAllStringSubmatch(compose, -1) {
			name, def := m[1], m[2]
			switch {
			case composeOwn[name] != "":
			case !declared(name):
				t.Errorf("docker-compose.yml gives %s a default (%s), but package config does not declare it and composeOwn does not say why", name, def)
			default:
				n++
				c.sameAsUnset(t, "docker-compose.yml", name, def)
			}
		}
		if n == 0 {
			t.Error("docker-compose.yml gives none of frognano's own variables a default; FROGNANO_SETUP_NETWORK had one")
		}
		// docker-proxy lets sandboxes join the setup network; its own default is that default.
		if !slices.Equal(dockerproxy.DefaultNetworks, []string{envpkg.DefaultNetwork}) {
			t.Errorf("docker-proxy's default networks are %v; FROGNANO_SETUP_NETWORK's default is %s", dockerproxy.DefaultNetworks, envpkg.DefaultNetwork)
		}
	})

	t.Run("Manifest", func(t *testing.T) {
		var file, made map[string]any
		if err := json.Unmarshal([]byte(readDoc(t, "deploy/github-app/manifest.json")), &file); err != nil {
			t.Fatal(err)
		}
		b, err := (&manifestFlow{opts: setupOptions{webhookURL: "https://frognano.example.com/webhook"}}).manifest()
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &made); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"description", "default_permissions", "default_events", "public"} {
			if !reflect.DeepEqual(file[k], made[k]) {
				t.Errorf("deploy/github-app/manifest.json: %s is %v; `frognano setup` asks for %v", k, file[k], made[k])
			}
		}
	})
}

// declared reports whether package config declares name.
func declared(name string) bool {
	_, ok := config.Lookup(name)
	return ok
}

// literalRE is a default cell that is one value.
var literalRE = regexp.MustCompile("^`([^`]*)`$")

// docsCheck is the base configuration and what loading it read.
type docsCheck struct {
	d    docsEnv
	base config.Service
	read map[string]bool
}

func newDocsCheck(t *testing.T) *docsCheck {
	d := newDocsEnv(t)
	base, read, err := d.load(nil, true)
	if err != nil {
		t.Fatal(err)
	}
	return &docsCheck{d: d, base: base, read: read}
}

// sameAsUnset checks that name=value, the documented default, changes nothing.
func (c *docsCheck) sameAsUnset(t *testing.T, where, name, value string) {
	t.Helper()
	if pd, ok := packageDefaults[name]; ok {
		if value != pd.want {
			t.Errorf("%s: %s's default is documented as %q; the code's is %q", where, name, value, pd.want)
		}
		if got := pd.field(c.base); got != "" {
			t.Errorf("%s unset gives %q, so %s's default does not apply", name, got, pd.owner)
		}
		return
	}
	cfg, _, err := c.d.load(map[string]string{name: value}, true)
	if err != nil {
		t.Errorf("%s: %s=%s, documented as the default, is refused: %v", where, name, value, err)
		return
	}
	if a, b := viewOf(cfg), viewOf(c.base); !reflect.DeepEqual(a, b) {
		t.Errorf("%s: %s=%s is documented as the default, but differs from leaving it unset in %s", where, name, value, firstDiff("", reflect.ValueOf(a), reflect.ValueOf(b)))
	}
}

// packageDefaults are the variables whose unset value is the zero value, which the package
// that uses it replaces with its default constant (githubapp's withDefaults, pinned by
// TestPublish's commit identity and the Endpoints tests): the documents must give that
// constant, and unset must leave the zero value.
var packageDefaults = map[string]struct {
	want, owner string
	field       func(config.Service) string
}{
	"GITHUB_URL": {githubapp.DefaultURL, "githubapp.DefaultURL", func(c config.Service) string { return c.GitHub.URL }},
}

// describedDefaults check what the words of a default that is not a value say (package config
// declares the words, which the table's cell must repeat).
var describedDefaults = map[string]func(t *testing.T, c *docsCheck){
	"DATABASE_URL":                required("DATABASE_URL", "DATABASE_URL is not set"),
	"GITHUB_APP_ID":               required("GITHUB_APP_ID", "GITHUB_APP_ID is not set"),
	"GITHUB_APP_PRIVATE_KEY":      required("GITHUB_APP_PRIVATE_KEY", "GITHUB_APP_PRIVATE_KEY or GITHUB_APP_PRIVATE_KEY_FILE is not set"),
	"GITHUB_APP_PRIVATE_KEY_FILE": required("GITHUB_APP_PRIVATE_KEY", "GITHUB_APP_PRIVATE_KEY or GITHUB_APP_PRIVATE_KEY_FILE is not set"),
	"GITHUB_WEBHOOK_SECRET": func(t *testing.T, c *docsCheck) {
		required("GITHUB_WEBHOOK_SECRET", "GITHUB_WEBHOOK_SECRET is not set")(t, c)
		if _, _, err := c.d.load(map[string]string{"GITHUB_WEBHOOK_SECRET": ""}, false); err != nil {
			t.Errorf("`frognano worker` without GITHUB_WEBHOOK_SECRET: %v", err)
		}
	},
	"FROGNANO_MODEL_URL": func(t *testing.T, c *docsCheck) {
		if err := checkRunnerConfig(c.base.Runner); err == nil || !strings.Contains(err.Error(), "FROGNANO_MODEL_URL") {
			t.Errorf("workers without FROGNANO_MODEL_URL: err = %v", err)
		}
	},
	// Unset, frognano's commits carry no identity of their own, so GitHub signs them
	// (githubapp: TestPublishSignedCommitUnderRuleset).
	"FROGNANO_COMMIT_NAME":  noCommitIdentity,
	"FROGNANO_COMMIT_EMAIL": noCommitIdentity,
	"FROGNANO_PUBLIC_URL": func(t *testing.T, c *docsCheck) {
		if c.base.Queue.PublicURL != "" || c.base.Web.PublicURL != "" {
			t.Errorf("FROGNANO_PUBLIC_URL unset gives links to %q", c.base.Queue.PublicURL)
		}
	},
	"FROGNANO_API_URL":         apiClientNeeds("FROGNANO_API_URL"),
	"FROGNANO_API_TOKEN":       apiClientNeeds("FROGNANO_API_TOKEN"),
	"GITHUB_APP_CLIENT_ID":     pagesOff,
	"GITHUB_APP_CLIENT_SECRET": pagesOff,
	"FROGNANO_WEB_TOKEN":       pagesOff,
	"FROGNANO_SESSION_KEY":     pagesOff,
	"FROGNANO_METRICS_ADDR": func(t *testing.T, c *docsCheck) {
		if c.base.Admin.MetricsAddr != "" { // startAdmin starts nothing without it
			t.Errorf("FROGNANO_METRICS_ADDR unset gives %q", c.base.Admin.MetricsAddr)
		}
	},
	"FROGNANO_ADMIN_TOKEN": func(t *testing.T, c *docsCheck) {
		if c.base.Admin.AdminToken != "" {
			t.Errorf("FROGNANO_ADMIN_TOKEN unset gives a token")
		}
	},
	"FROGNANO_APP_SLUG": func(t *testing.T, c *docsCheck) {
		if c.base.AppSlug != "" { // appSlug asks GitHub (GET /app) for it at start
			t.Errorf("FROGNANO_APP_SLUG unset gives %q, so GitHub is not asked", c.base.AppSlug)
		}
	},
	"FROGNANO_MODELS_FILE": func(t *testing.T, c *docsCheck) {
		if m := c.base.Runner.Models; m == nil || len(m.Servers) != 1 || m.Servers[0].Name != m.Default {
			t.Errorf("FROGNANO_MODELS_FILE unset gives models %+v, not the default one only", m)
		}
	},
	"FROGNANO_ESCALATE_TO": func(t *testing.T, c *docsCheck) {
		if m := c.base.Runner.Models; m == nil || m.EscalateTo != "" {
			t.Errorf("FROGNANO_ESCALATE_TO unset gives escalation to %+v", m)
		}
	},
	"FROGNANO_MODEL_API_KEY": func(t *testing.T, c *docsCheck) {
		if c.base.Runner.Leaf.APIKey != "" {
			t.Error("FROGNANO_MODEL_API_KEY unset gives a key")
		}
	},
	"FROGNANO_SANDBOX_IMAGES": func(t *testing.T, c *docsCheck) {
		if len(c.base.Runner.Images) != 0 {
			t.Errorf("FROGNANO_SANDBOX_IMAGES unset gives %v", c.base.Runner.Images)
		}
	},
	"FROGNANO_SCANNERS": func(t *testing.T, c *docsCheck) {
		if len(c.base.Runner.Scanners) != 0 {
			t.Errorf("FROGNANO_SCANNERS unset gives %d scanners", len(c.base.Runner.Scanners))
		}
	},
	"FROGNANO_SETUP_ENV": func(t *testing.T, c *docsCheck) {
		if len(c.base.Runner.Env.Env) != 0 {
			t.Errorf("FROGNANO_SETUP_ENV unset gives setup %d variables", len(c.base.Runner.Env.Env))
		}
	},
	"FROGNANO_OSV_DIR": func(t *testing.T, c *docsCheck) {
		if c.base.Runner.OSVDir != "" {
			t.Errorf("FROGNANO_OSV_DIR unset gives %q", c.base.Runner.OSVDir)
		}
	},
	"FROGNANO_MAX_SANDBOXES": func(t *testing.T, c *docsCheck) {
		host := sandbox.HostMemory()
		if host <= 0 {
			t.Fatal("cannot read this host's memory (/proc/meminfo), which the default is made of")
		}
		// At least one, on a host smaller than two sandboxes (config.DefaultMaxSandboxes).
		c.sameAsUnset(t, "host memory / 4g, less one", "FROGNANO_MAX_SANDBOXES", strconv.Itoa(max(int(host/sandbox.DefaultMemory)-1, 1)))
		cfg, _, err := c.d.load(map[string]string{"FROGNANO_SANDBOX_MEMORY": "1g"}, true)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := cfg.Runner.Sandbox.Slots.Cap(), max(int(host>>30)-1, 1); got != want {
			t.Errorf("FROGNANO_SANDBOX_MEMORY=1g: %d sandboxes by default, want host memory / 1 GiB less one, %d", got, want)
		}
	},
	"FROGNANO_EXECUTOR": func(t *testing.T, c *docsCheck) {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		c.sameAsUnset(t, "beside the binary", "FROGNANO_EXECUTOR", filepath.Join(filepath.Dir(self), "frognano-executor"))
	},
	"FROGNANO_WORK_DIR": func(t *testing.T, c *docsCheck) {
		c.sameAsUnset(t, "the system temp dir", "FROGNANO_WORK_DIR", os.TempDir())
	},
	"FROGNANO_SANDBOX_OWNER": func(t *testing.T, c *docsCheck) {
		host, err := os.Hostname()
		if err != nil {
			t.Fatal(err)
		}
		c.sameAsUnset(t, "the host name", "FROGNANO_SANDBOX_OWNER", host)
	},
}

// required checks that loading without name fails, saying want.
func required(name, want string) func(t *testing.T, c *docsCheck) {
	return func(t *testing.T, c *docsCheck) {
		if _, _, err := c.d.load(map[string]string{name: ""}, true); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("without %s: err = %v, want %q", name, err, want)
		}
	}
}

// apiClientNeeds: `frognano runs start` refuses to start without name, and says so.
func apiClientNeeds(name string) func(t *testing.T, c *docsCheck) {
	return func(t *testing.T, _ *docsCheck) {
		env := map[string]string{"FROGNANO_API_URL": "https://frognano.example.com", "FROGNANO_API_TOKEN": "fna_x", name: ""}
		if _, _, err := config.APIClient(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), name+" is not set") {
			t.Errorf("frognano runs start without %s: err = %v", name, err)
		}
	}
}

func pagesOff(t *testing.T, c *docsCheck) {
	if c.base.Web.Off == "" {
		t.Error("without sign-in settings the run pages are served")
	}
}

// proseExceptions are defaults stated in the documents' text that the checks above cannot
// compare, with the reason.
var proseExceptions = map[string]string{
	"FROGNANO_TESTENV_DIR": "CONTRIBUTING.md writes the port as PORT; deploy/testenv/pg.sh writes $pg_port",
}

// composeOwn are docker-compose.yml's ${VAR:-X} defaults that are compose's own choice.
var composeOwn = map[string]string{
	"FROGNANO_SANDBOX_OWNER":      "compose names its frognano and docker-proxy alike (frognano-compose), not after the container's random host name",
	"GITHUB_APP_PRIVATE_KEY_FILE": "the host path mounted as the key file; frognano itself reads /run/secrets/github-app.pem",
	"FROGNANO_IMAGE":              "compose's image name, not read by frognano",
	"FROGNANO_POSTGRES_IMAGE":     "compose's image name, not read by frognano",
	"FROGNANO_ENV_FILE":           "compose's env_file path, not read by frognano",
	"FROGNANO_HTTP_PUBLISH":       "compose's published port, not read by frognano",
	"FROGNANO_METRICS_PUBLISH":    "compose's published port, not read by frognano",
	"FROGNANO_DOCKER_SOCKET":      "the engine's socket on the host, for compose's docker-proxy, not read by frognano",
}

// notSettings are FROGNANO_* and GITHUB_* names the code spells that are not settings of the
// service, so no settings table lists them.
var notSettings = map[string]string{
	"FROGNANO_EXEC_ID":        "marks each command frognano runs inside a sandbox (runner/sandbox); never read from frognano's environment",
	"FROGNANO_SETUP":          "given to the repository's setup.sh (docs/environments.md); not read",
	"FROGNANO_BASE_COMMIT":    "given to the repository's setup.sh (docs/environments.md); not read",
	"FROGNANO_ENV":            "given to the repository's setup.sh (docs/environments.md); not read",
	"FROGNANO_SARIF":          "given to each of the operator's scanners: where to write SARIF (docs/environments.md); not read",
	"FROGNANO_CHROMIUM":       "read by the tests' browser (web/webtest), documented in CONTRIBUTING.md",
	"FROGNANO_TEST_ARTIFACTS": "read by the tests' browser (web/webtest), documented in CONTRIBUTING.md",
}

// codeNames are the FROGNANO_* and GITHUB_* names spelled as whole string literals in the
// module's Go code (tests aside), with a file that spells each.
func codeNames(t *testing.T) map[string]string {
	t.Helper()
	re := regexp.MustCompile(`"((?:FROGNANO|GITHUB)_[A-Z0-9_]+)"`)
	out := map[string]string{}
	err := filepath.WalkDir(repoRoot, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && (strings.HasPrefix(e.Name(), ".") && path != repoRoot || e.Name() == "testdata") {
			return filepath.SkipDir
		}
		if e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = strings.TrimPrefix(path, repoRoot+"/")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if out["FROGNANO_LABEL"] == "" || out["GITHUB_APP_ID"] == "" {
		t.Fatalf("found no FROGNANO_LABEL or GITHUB_APP_ID in the code: %v", out)
	}
	return out
}

// noCommitIdentity: FROGNANO_COMMIT_NAME/EMAIL unset leave githubapp's commit identity empty.
func noCommitIdentity(t *testing.T, c *docsCheck) {
	if c.base.GitHub.CommitName != "" || c.base.GitHub.CommitEmail != "" {
		t.Errorf("FROGNANO_COMMIT_NAME/EMAIL unset give the identity %q <%q>", c.base.GitHub.CommitName, c.base.GitHub.CommitEmail)
	}
}
