package config

import (
	"github.com/frognano/frognano/internal/secretform"
)

// ExportSecrets returns the operator's values that `frognano export` looks for, in every form
// secretform knows, in what it writes: each secret setting that is set (Var.Secret: the
// webhook secret, the App's key, the model server's key, the database URL, ...) and each value
// FROGNANO_SETUP_ENV hands to setup, with the password of every URL among them
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
