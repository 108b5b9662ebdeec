package githubapp

import (
	"fmt"
	"net/url"
	"strings"
)

// SettingSecrets returns what must stay secret of NAME=value settings the operator hands to
// code frognano does not trust (FROGNANO_SETUP_ENV, given to the repository's setup script,
// which can write them where the model reads them): every value of minSecretLen bytes or more,
// and, of a value that is a URL with a password (a proxy's http://user:pass@host), that
// password alone, decoded and as the URL spells it. Shorter values are settings (a "1", a
// "true"), not secrets: replacing them would mangle unrelated text. A URL's password shorter
// than minSecretLen is an error, which names the setting and never the value: it could be
// neither redacted nor told apart from ordinary text.
func SettingSecrets(entries []string) ([]string, error) {
	var out []string
	for _, kv := range entries {
		name, v, _ := strings.Cut(kv, "=")
		if len(v) >= minSecretLen {
			out = append(out, v)
		}
		u, err := url.Parse(v)
		if err != nil || u.User == nil {
			continue
		}
		p, ok := u.User.Password()
		if !ok {
			continue
		}
		if len(p) < minSecretLen {
			return nil, fmt.Errorf("the password in %s's URL is shorter than %d bytes: frognano could not keep it out of what it publishes; use a longer one", name, minSecretLen)
		}
		out = append(out, p)
		// As written in the URL: user:pass before the last @ of the authority.
		if i := strings.Index(v, "://"); i >= 0 {
			authority, _, _ := strings.Cut(v[i+3:], "/")
			if at := strings.LastIndex(authority, "@"); at >= 0 {
				if _, raw, ok := strings.Cut(authority[:at], ":"); ok && raw != p && len(raw) >= minSecretLen {
					out = append(out, raw)
				}
			}
		}
	}
	return out, nil
}
