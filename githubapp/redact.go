package githubapp

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/frognano/frognano/internal/secretform"
)

// Redacted is what Redact puts in place of a secret.
const Redacted = "[REDACTED]"

// tokenPatterns match GitHub tokens: the classic 40-character "ghs_" installation tokens, the
// newer longer ones (GitHub announced that their length will grow, so no upper bound), the other
// gh?_ kinds, fine-grained personal tokens, and the base64 of "x-access-token:" that starts a
// git Basic authorization header built from one of them. They are separate expressions, not one
// alternation, because each then starts with a literal that regexp finds with a fast string
// search: about 30 times faster on ordinary log lines.
var tokenPatterns = []*regexp.Regexp{
	regexp.MustCompile(`gh[pousr]_[A-Za-z0-9_]{36,}`),
	regexp.MustCompile(`github_pat_[A-Za-z0-9_]{22,}`),
	regexp.MustCompile(`eC1hY2Nlc3MtdG9rZW46[A-Za-z0-9+/=]+`),
}

// urlCredentials matches the user:password part of a URL (a clone URL with a token, a database
// URL with its password): whatever the password is, it goes, with the user name. The password
// runs to the last @ before the path, so one with a raw @ in it goes whole.
var urlCredentials = regexp.MustCompile(`://[^/\s:@]+:[^/\s]*@`)

// minSecretLen is the shortest secret Redact replaces. Shorter strings (a "1", a "true", a
// port) are too common to replace without mangling unrelated text, and no real credential is
// that short: RegisterSecret ignores them, and a configuration secret that short is refused
// where one would be a password (SettingSecrets).
const minSecretLen = secretform.MinLen

// maxSecrets bounds the tokens' registry: tokens are refreshed hourly, so a long-running
// process would otherwise grow it without limit. The oldest entries go first; they have long
// expired. The configuration's secrets are not counted: they never expire.
const maxSecrets = 4096

var secrets struct {
	sync.RWMutex
	config []string // RegisterConfigSecret's, as given and as JSON spells them, for the process's life, longest first
	tokens []string // RegisterSecret's, likewise, oldest first
	// values are the secrets as given, for SecretMatcher: the configuration's, then the
	// tokens still in tokens.
	values  []string
	matcher *secretform.Matcher // of values; nil until asked for after a change
}

// RegisterSecret makes Redact replace s wherever it appears, for as long as the registry has
// room (the oldest of 4096 go first): for tokens, which expire. Strings shorter than
// minSecretLen are ignored. Safe for concurrent use.
func RegisterSecret(s string) {
	register(s, &secrets.tokens)
}

// RegisterConfigSecret makes Redact replace s wherever it appears for the rest of the
// process, and SecretMatcher and HoldsSecret find it: for the secrets of frognano's configuration, such as the
// operator's setup values (SettingSecrets), which never expire. Strings shorter than
// minSecretLen are ignored. Safe for concurrent use.
func RegisterConfigSecret(s string) {
	register(s, &secrets.config)
}

func register(s string, list *[]string) {
	if len(s) < minSecretLen {
		return
	}
	secrets.Lock()
	defer secrets.Unlock()
	if slices.Contains(secrets.values, s) {
		return
	}
	// The JSON spellings are Redact's; SecretMatcher looks for those and every other form
	// (secretform) of the value itself.
	for _, form := range secretform.JSONForms(s) {
		if slices.Contains(secrets.config, form) || slices.Contains(secrets.tokens, form) {
			continue
		}
		if list == &secrets.tokens && len(secrets.tokens) >= maxSecrets {
			secrets.tokens = secrets.tokens[1:]
		}
		*list = append(*list, form)
	}
	// A secret that holds another (a proxy URL and its password) goes whole, not in pieces
	// that leave the rest of it.
	slices.SortStableFunc(secrets.config, func(a, b string) int { return len(b) - len(a) })
	secrets.values = append(secrets.values, s)
	if len(secrets.values) > maxSecrets+1024 {
		// Tokens that left the registry leave the matcher too (configuration secrets are few
		// and never leave: their forms are still in config).
		secrets.values = slices.DeleteFunc(secrets.values, func(v string) bool {
			return !slices.Contains(secrets.config, v) && !slices.Contains(secrets.tokens, v)
		})
	}
	secrets.matcher = nil
}

// SecretMatcher returns a matcher of every registered secret (the tokens and the
// configuration's secrets) in every form internal/secretform knows: as is, as JSON spells it,
// base64 (both alphabets, any alignment), hex and URL-encoded. It is what a file that will be
// published must not hold (check/patch's published-tree check, in the runner and in
// Publish): text can be redacted, a file cannot. The matcher is built once per change of the
// registry and is safe for concurrent use.
func SecretMatcher() *secretform.Matcher {
	secrets.RLock()
	m := secrets.matcher
	secrets.RUnlock()
	if m != nil {
		return m
	}
	secrets.Lock()
	defer secrets.Unlock()
	if secrets.matcher == nil {
		list := make([]secretform.Secret, len(secrets.values))
		for i, v := range secrets.values {
			list[i] = secretform.Secret{Value: v}
		}
		secrets.matcher = secretform.New(list)
	}
	return secrets.matcher
}

// HoldsSecret reports whether s holds a registered secret (a token, a secret of the
// configuration) in any form SecretMatcher knows. It is for text that cannot be redacted and
// must then not be published at all.
func HoldsSecret(s string) bool {
	_, found := SecretMatcher().Find([]byte(s))
	return found
}

// Redact returns s with every GitHub token, every string given to RegisterSecret or
// RegisterConfigSecret (also as JSON spells it) and the credentials of every URL
// (user:password@) replaced by "[REDACTED]". It is frognano's one redactor: use it on
// anything that leaves the process (logs, transcripts, PR bodies, comments, stored errors,
// error messages that quote git's output; RedactJSON for JSON documents, RedactLogs for a
// logger). Redacting twice changes nothing.
func Redact(s string) string {
	secrets.RLock()
	for _, list := range [][]string{secrets.config, secrets.tokens} {
		for _, secret := range list {
			if strings.Contains(s, secret) {
				s = strings.ReplaceAll(s, secret, Redacted)
			}
		}
	}
	secrets.RUnlock()
	for _, p := range tokenPatterns {
		s = p.ReplaceAllString(s, Redacted)
	}
	if !strings.Contains(s, "://") { // most text has no URL; skip the expression
		return s
	}
	return urlCredentials.ReplaceAllString(s, "://"+Redacted+"@")
}
