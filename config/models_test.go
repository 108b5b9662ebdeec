package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp"
)

// TestParseModelsFile: each entry is checked, and a bad one named by the file, its place and
// its name, with what is wrong; a key comes from the variable or the file named, never quoted.
func TestParseModelsFile(t *testing.T) {
	t.Parallel()
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte("file-key-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := envMap(map[string]string{"LARGE_KEY": "env-key-0123456789"})
	const ok = "  - name: large\n    url: http://gpu:8000/v1\n    model: big/model\n"
	for _, tt := range []struct {
		name, text string
		want       string // an error that says this; "" : accepted
	}{
		{"empty file", "", ""},
		{"no models", "models: []\n", ""},
		{"one", "models:\n" + ok, ""},
		{"key from env", "models:\n" + ok + "    api_key_env: LARGE_KEY\n    concurrency: 2\n    repositories: [acme/*, tools/cli]\n", ""},
		{"key from file", "models:\n" + ok + "    api_key_file: " + keyFile + "\n", ""},
		{"json", `{"models": [{"name": "large", "url": "https://m.example/v1", "model": "m"}]}`, ""},
		{"yaml syntax", "models:\n  - name: [\n", "models.yml: yaml:"},
		{"unknown key", "models:\n" + ok + "    temperature: 0.2\n", "field temperature not found"},
		{"wrong type", "models:\n" + ok + "    concurrency: many\n", "cannot unmarshal"},
		{"no name", "models:\n  - url: http://gpu:8000/v1\n    model: m\n", "models.yml: model 1: name is required"},
		{"bad name", "models:\n  - name: 'a b'\n    url: http://gpu:8000/v1\n    model: m\n", `model 1 ("a b"): name must be`},
		{"no url", "models:\n  - name: large\n    model: m\n", `model 1 ("large"): url is required`},
		{"not http", "models:\n  - name: large\n    url: gpu:8000\n    model: m\n", "url must start with http:// or https://"},
		{"no model", "models:\n  - name: large\n    url: http://gpu:8000/v1\n", "model is required"},
		{"negative concurrency", "models:\n" + ok + "    concurrency: -1\n", "concurrency must not be negative"},
		{"both keys", "models:\n" + ok + "    api_key_env: LARGE_KEY\n    api_key_file: " + keyFile + "\n", "not both"},
		{"unset key var", "models:\n" + ok + "    api_key_env: NOT_SET\n", "api_key_env: NOT_SET is not set"},
		{"missing key file", "models:\n" + ok + "    api_key_file: /nonexistent/key\n", "api_key_file: cannot read the file it names: no such file or directory"},
		// A key written where its variable's or file's name goes is not quoted back.
		{"key in api_key_env", "models:\n" + ok + "    api_key_env: sk-live-0123456789\n", "api_key_env must name an environment variable"},
		{"key in api_key_file", "models:\n" + ok + "    api_key_file: sk-live-0123456789\n", "api_key_file: cannot read the file it names"},
		{"not a url", "models:\n  - name: large\n    url: http://gpu:port/v1\n    model: m\n", "url is not a URL"},
		{"credentials in url", "models:\n  - name: large\n    url: http://u:sk-live-0123456789@gpu:8000/v1\n    model: m\n", "url must not hold credentials"},
		{"bad glob", "models:\n" + ok + "    repositories: [acme]\n", `repositories: "acme" is not an OWNER/NAME glob`},
		{"bad pattern", "models:\n" + ok + "    repositories: ['acme/[']\n", "is not an OWNER/NAME glob"},
		{"twice", "models:\n" + ok + ok, `models.yml: model 2 ("large"): the name is also model 1's`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			servers, err := ParseModelsFile("models.yml", []byte(tt.text), env)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				for _, s := range servers {
					if s.Limiter == nil {
						t.Errorf("%s has no limiter", s.Name)
					}
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one that says %q", err, tt.want)
			}
			for _, key := range []string{"env-key-0123456789", "file-key-0123456789", "sk-live-0123456789"} {
				if strings.Contains(err.Error(), key) {
					t.Errorf("the error quotes a key: %v", err)
				}
			}
		})
	}

	servers, err := ParseModelsFile("m.yml", []byte("models:\n"+ok+"    api_key_env: LARGE_KEY\n    repositories: [Acme/*]\n"+
		"  - name: small\n    url: http://cpu:8000/v1\n    model: s\n    api_key_file: "+keyFile+"\n    concurrency: 1\n"), env)
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 2 || servers[0].APIKey != "env-key-0123456789" || servers[1].APIKey != "file-key-0123456789" ||
		servers[0].BaseURL != "http://gpu:8000/v1" || servers[0].Model != "big/model" {
		t.Fatalf("servers = %+v", servers)
	}
	if !servers[0].Allows("acme/api") || servers[0].Allows("other/api") || !servers[1].Allows("other/api") {
		t.Errorf("repositories: large allows acme/api %v, other/api %v; small allows other/api %v",
			servers[0].Allows("acme/api"), servers[0].Allows("other/api"), servers[1].Allows("other/api"))
	}
}

// TestModelsConfig: the default model (FROGNANO_MODEL_*) comes first under FROGNANO_MODEL_NAME,
// the file's follow, their keys are redacted, and a start with a bad file, a name twice or an
// unknown escalation fails naming the setting.
func TestModelsConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "models.yml")
	key := "named-model-key-" + randomText(t)
	if err := os.WriteFile(file, []byte("models:\n  - name: large\n    url: http://gpu:8000/v1\n    model: big\n    api_key_env: LARGE_KEY\n    concurrency: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := map[string]string{"FROGNANO_MODEL_URL": "http://cpu:8000/v1", ModelsFileVar: file, "LARGE_KEY": key}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	cfg, err := Runner(envMap(with("FROGNANO_ESCALATE_TO", "large")))
	if err != nil {
		t.Fatal(err)
	}
	m := cfg.Models
	if m == nil || len(m.Servers) != 2 || m.Default != DefaultModelName || m.EscalateTo != "large" {
		t.Fatalf("models = %+v", m)
	}
	if d := m.Servers[0]; d.Name != "default" || d.BaseURL != "http://cpu:8000/v1" || d.Limiter != cfg.Attempts.ModelLimiter {
		t.Errorf("the default model = %+v", d)
	}
	if l := m.Servers[1]; l.Name != "large" || l.APIKey != key || l.Limiter == nil || l.Limiter == cfg.Attempts.ModelLimiter {
		t.Errorf("the named model = %+v", l)
	}
	if got := githubapp.Redact("key: " + key); strings.Contains(got, key) {
		t.Errorf("the named model's key is not redacted: %q", got)
	}
	if cfg, err := Runner(envMap(with("FROGNANO_MODEL_NAME", "small"))); err != nil || cfg.Models.Default != "small" {
		t.Errorf("FROGNANO_MODEL_NAME=small: %v, %+v", err, cfg.Models)
	}

	for _, tt := range []struct {
		kv   []string
		want string
	}{
		{[]string{"FROGNANO_MODEL_NAME", "large"}, `model "large" is named twice`},
		{[]string{"FROGNANO_MODEL_NAME", "no spaces"}, `FROGNANO_MODEL_NAME="no spaces"`},
		{[]string{"FROGNANO_ESCALATE_TO", "huge"}, `the escalation model "huge" is not among the named ones (default, large)`},
		{[]string{ModelsFileVar, filepath.Join(dir, "missing.yml")}, "FROGNANO_MODELS_FILE: open " + filepath.Join(dir, "missing.yml")},
		{[]string{"LARGE_KEY", ""}, "FROGNANO_MODELS_FILE: " + file + `: model 1 ("large"): api_key_env: LARGE_KEY is not set`},
	} {
		_, err := Runner(envMap(with(tt.kv...)))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err = %v, want one that says %q", tt.kv, err, tt.want)
		}
	}
}

// FuzzParseModelsFile: whatever the file holds, parsing gives servers that are all valid, or
// an error naming the file; it never panics and never quotes the key.
func FuzzParseModelsFile(f *testing.F) {
	for _, s := range []string{
		"",
		"models:\n  - name: large\n    url: http://gpu:8000/v1\n    model: m\n    api_key_env: K\n    concurrency: 2\n    repositories: [acme/*]\n",
		`{"models": [{"name": "a", "url": "https://x/v1", "model": "m"}, {"name": "a", "url": "https://x/v1", "model": "m"}]}`,
		"models:\n  - name: [\n",
		"models: 3\n",
		"models:\n  - name: x\n    url: http://h\n    model: m\n    repositories: ['[']\n",
		"- a\n- b\n",
	} {
		f.Add(s)
	}
	const key = "fuzz-secret-key-value"
	env := envMap(map[string]string{"K": key})
	f.Fuzz(func(t *testing.T, text string) {
		servers, err := ParseModelsFile("f.yml", []byte(text), env)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yml") {
				t.Fatalf("the error does not name the file: %v", err)
			}
			if strings.Contains(err.Error(), key) {
				t.Fatalf("the error quotes the key: %v", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, s := range servers {
			if s.Name == "" || s.BaseURL == "" || s.Model == "" || seen[s.Name] || s.Limiter == nil {
				t.Fatalf("accepted an invalid server: %+v", s)
			}
			seen[s.Name] = true
		}
	})
}
