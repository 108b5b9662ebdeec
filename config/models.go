package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/frognano/frognano/githubapp"
	runs "github.com/frognano/frognano/run"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
)

// ModelsFile is what FROGNANO_MODELS_FILE holds: the model servers the operator names besides
// the default one (FROGNANO_MODEL_URL ...), in YAML (JSON is YAML too). An unknown key is an
// error, so that a misspelt one is not silently ignored.
//
//	models:
//	  - name: large
//	    url: http://gpu-2:8000/v1
//	    model: Qwen/Qwen3-Coder-30B-A3B-Instruct
//	    api_key_env: LARGE_MODEL_KEY   # or api_key_file: /run/secrets/large; neither: no key
//	    concurrency: 4                 # requests in flight, this process; 0 or unset: FROGNANO_MODEL_CONCURRENCY's default
//	    repositories: [acme/*, tools/cli]  # OWNER/NAME globs; unset: every repository
type ModelsFile struct {
	Models []ModelEntry `yaml:"models"`
}

// ModelEntry is one named model server of the models file.
type ModelEntry struct {
	Name         string   `yaml:"name"`
	URL          string   `yaml:"url"`
	Model        string   `yaml:"model"`
	APIKeyEnv    string   `yaml:"api_key_env"`
	APIKeyFile   string   `yaml:"api_key_file"`
	Concurrency  int      `yaml:"concurrency"`
	Repositories []string `yaml:"repositories"`
}

// parses reports whether u is a URL Go can request.
func parses(u string) bool {
	_, err := url.Parse(u)
	return err == nil
}

// hasUserinfo reports whether the URL u (which parses) names a user or password before its host.
func hasUserinfo(u string) bool {
	parsed, err := url.Parse(u)
	return err == nil && parsed.User != nil
}

// envName is an environment variable's name as api_key_env must write it.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ModelsFileVar is the variable that names the models file, for the texts that point to it.
const ModelsFileVar = "FROGNANO_MODELS_FILE"

// maxModelsFile bounds the models file: it is the operator's, but a wrong path (a log, a
// device) must not be read whole.
const maxModelsFile = 1 << 20

// ParseModelsFile reads a models file's text (file names it in the errors). Each entry's API
// key is read from the environment variable (getenv) or the file it names; a key is never
// quoted in an error. The first problem is the error, naming the file, the entry and what is
// wrong.
func ParseModelsFile(file string, data []byte, getenv func(string) string) ([]runner.ModelServer, error) {
	var f ModelsFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	servers := make([]runner.ModelServer, 0, len(f.Models))
	seen := map[string]int{}
	for i, m := range f.Models {
		where := fmt.Sprintf("%s: model %d", file, i+1)
		if m.Name != "" {
			where += fmt.Sprintf(" (%q)", m.Name)
		}
		s, err := m.server(getenv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if j, ok := seen[s.Name]; ok {
			return nil, fmt.Errorf("%s: the name is also model %d's", where, j+1)
		}
		seen[s.Name] = i
		servers = append(servers, s)
	}
	return servers, nil
}

// server checks the entry and reads its key.
func (m ModelEntry) server(getenv func(string) string) (runner.ModelServer, error) {
	s := runner.ModelServer{Name: m.Name, BaseURL: strings.TrimSpace(m.URL), Model: strings.TrimSpace(m.Model), Repositories: m.Repositories}
	switch {
	case m.Name == "":
		return s, errors.New("name is required")
	case !runs.ValidModelName(m.Name):
		return s, errors.New("name must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit")
	case s.BaseURL == "":
		return s, errors.New("url is required (the OpenAI-compatible base URL, such as http://host:8000/v1)")
	case !strings.HasPrefix(s.BaseURL, "http://") && !strings.HasPrefix(s.BaseURL, "https://"):
		return s, errors.New("url must start with http:// or https://")
	case !parses(s.BaseURL):
		return s, errors.New("url is not a URL")
	case hasUserinfo(s.BaseURL):
		// The URL is named in errors (an unreachable server), which runs record and show.
		return s, errors.New("url must not hold credentials (user:password@): give the key with api_key_env or api_key_file")
	case s.Model == "":
		return s, errors.New("model is required (the served model name)")
	case m.Concurrency < 0:
		return s, errors.New("concurrency must not be negative")
	case m.APIKeyEnv != "" && m.APIKeyFile != "":
		return s, errors.New("set api_key_env or api_key_file, not both")
	}
	for _, g := range m.Repositories {
		owner, name, ok := strings.Cut(g, "/")
		if _, err := path.Match(g, ""); err != nil || !ok || owner == "" || name == "" || strings.Contains(name, "/") {
			return s, fmt.Errorf("repositories: %q is not an OWNER/NAME glob (such as acme/* or acme/api)", g)
		}
	}
	// The names of the key's variable and file are quoted only when they cannot be the key
	// itself, written there by mistake: an error is logged and shown.
	switch {
	case m.APIKeyEnv != "":
		if !envName.MatchString(m.APIKeyEnv) {
			return s, errors.New("api_key_env must name an environment variable (letters, digits and '_'), not hold the key")
		}
		s.APIKey = getenv(m.APIKeyEnv)
		if s.APIKey == "" {
			return s, fmt.Errorf("api_key_env: %s is not set", m.APIKeyEnv)
		}
	case m.APIKeyFile != "":
		b, err := os.ReadFile(m.APIKeyFile)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return s, fmt.Errorf("api_key_file: cannot read the file it names: %w", err)
		}
		if s.APIKey = strings.TrimSpace(string(b)); s.APIKey == "" {
			return s, fmt.Errorf("api_key_file: %s is empty", m.APIKeyFile)
		}
	}
	s.Limiter = leaf.NewLimiter(cmp.Or(m.Concurrency, DefaultModelConcurrency))
	return s, nil
}

// readModels builds cfg.Models: the default server (FROGNANO_MODEL_NAME, with the loop's
// URL, model, key and FROGNANO_MODEL_CONCURRENCY's limiter) first, then the models file's, and
// FROGNANO_ESCALATE_TO. Every key is handed to the redactor. It runs after readAttempts.
func readModels(e *env, cfg *runner.Config) {
	def := runner.ModelServer{Name: modelName.get(e), BaseURL: cfg.Leaf.BaseURL, Model: cfg.Leaf.Model, APIKey: cfg.Leaf.APIKey,
		Limiter: cfg.Attempts.ModelLimiter}
	if !runs.ValidModelName(def.Name) {
		e.Add(fmt.Errorf("%s=%q: a model's name is 1 to 64 letters, digits, '.', '_' or '-'", modelName.Name, def.Name))
	}
	m := &runner.Models{Servers: []runner.ModelServer{def}, Default: def.Name, EscalateTo: escalateTo.get(e)}
	if file := modelsFile.get(e); file != "" {
		servers, err := loadModelsFile(file, e.getenv)
		if err != nil {
			e.Add(fmt.Errorf("%s: %w", modelsFile.Name, err))
		}
		for _, s := range servers {
			githubapp.RegisterConfigSecret(s.APIKey)
		}
		m.Servers = append(m.Servers, servers...)
	}
	if err := m.Check(); err != nil {
		e.Add(fmt.Errorf("the models (%s, %s): %w", modelName.Name, modelsFile.Name, err))
	}
	cfg.Models = m
}

// loadModelsFile reads and parses the models file.
func loadModelsFile(file string, getenv func(string) string) ([]runner.ModelServer, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxModelsFile+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	if len(data) > maxModelsFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", file, maxModelsFile)
	}
	return ParseModelsFile(file, data, getenv)
}
