package secretform

import (
	"fmt"
	"net/url"
	"strings"
)

// Secret is a value to look for, and what to call it without showing it.
type Secret struct {
	// Name says whose value it is, for messages: a setting's name ("MIRROR_TOKEN"), "the
	// password in PROXY_URL", or "" when the holder does not know (a token).
	Name  string
	Value string
}

// Settings returns what must stay secret of NAME=value settings the operator hands to code
// frognano does not trust (FROGNANO_SETUP_ENV, given to the repository's setup script): every
// value of MinLen bytes or more, and, of a value that is a URL with a password (a proxy's
// http://user:pass@host), that password alone, decoded and as the URL spells it. Shorter values
// are settings (a "1", a "true"), not secrets. A URL's password shorter than MinLen is an
// error, which names the setting and never the value: it could be neither looked for nor told
// apart from ordinary text.
func Settings(entries []string) ([]Secret, error) {
	var out []Secret
	for _, kv := range entries {
		name, v, _ := strings.Cut(kv, "=")
		if len(v) >= MinLen {
			out = append(out, Secret{Name: name, Value: v})
		}
		u, err := url.Parse(v)
		if err != nil || u.User == nil {
			continue
		}
		p, ok := u.User.Password()
		if !ok {
			continue
		}
		if len(p) < MinLen {
			return nil, fmt.Errorf("the password in %s's URL is shorter than %d bytes: frognano could not keep it out of what it publishes; use a longer one", name, MinLen)
		}
		what := "the password in " + name
		out = append(out, Secret{Name: what, Value: p})
		// As written in the URL: user:pass before the last @ of the authority.
		if i := strings.Index(v, "://"); i >= 0 {
			authority, _, _ := strings.Cut(v[i+3:], "/")
			if at := strings.LastIndex(authority, "@"); at >= 0 {
				if _, raw, ok := strings.Cut(authority[:at], ":"); ok && raw != p && len(raw) >= MinLen {
					out = append(out, Secret{Name: what, Value: raw})
				}
			}
		}
	}
	return out, nil
}
