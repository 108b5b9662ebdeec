package config

import (
	"bytes"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/frognano/frognano/internal/secretform"
)

// ExportSecrets returns the operator's values that `frognano export` looks for, in every form
// secretform knows, in what it writes: each secret setting that is set (Var.Secret: the
// webhook secret, the App's key, the model server's key, the database URL, ...) and each value
// FROGNANO_SETUP_ENV hands to setup, and each model server's key that FROGNANO_MODELS_FILE
// names (api_key_env, api_key_file), with the password of every URL among them
// (secretform.Settings). A value too short to look for (secretform.MinLen) is left out: the
// service refuses such a password where it would be one. It never fails and never quotes a
// value.
func ExportSecrets(getenv func(string) string) []secretform.Secret {
	e := newEnv(getenv)
	var entries []string
	for _, v := range declared {
		if v.Secret {
			if val := e.Secret(v.Name); val != "" {
				entries = append(entries, v.Name+"="+val)
			}
		}
	}
	entries = append(entries, setupEnv.get(e)...)
	entries = append(entries, modelsFileKeys(modelsFile.get(e), getenv)...)
	var out []secretform.Secret
	for _, kv := range entries {
		list, err := secretform.Settings([]string{kv})
		if err != nil {
			continue // a URL's password too short to look for; the value itself may still be
		}
		out = append(out, list...)
	}
	return out
}

// modelsFileKeys returns NAME=key for each model server of the models file named file ("":
// none) whose key can be read here: every entry that can, whatever is wrong with the others
// (the export is not the service, and checks nothing but where the keys are).
func modelsFileKeys(file string, getenv func(string) string) []string {
	if file == "" {
		return nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxModelsFile+1))
	if err != nil || len(data) > maxModelsFile {
		return nil
	}
	var mf ModelsFile
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&mf); err != nil {
		return nil
	}
	var out []string
	for _, m := range mf.Models {
		var key string
		switch {
		case m.APIKeyEnv != "" && envName.MatchString(m.APIKeyEnv):
			key = getenv(m.APIKeyEnv)
		case m.APIKeyFile != "":
			if b, err := readBounded(m.APIKeyFile, 64<<10); err == nil {
				key = strings.TrimSpace(string(b))
			}
		}
		if key != "" {
			out = append(out, "a model's key in "+ModelsFileVar+"="+key)
		}
	}
	return out
}

// readBounded reads at most limit bytes of file.
func readBounded(file string, limit int64) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}
