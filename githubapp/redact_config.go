package githubapp

import "github.com/frognano/frognano/internal/secretform"

// SettingSecrets returns what must stay secret of NAME=value settings the operator hands to
// code frognano does not trust (FROGNANO_SETUP_ENV, given to the repository's setup script,
// which could write them where the model reads them): secretform.Settings' values (every value
// of minSecretLen bytes or more, and the password of a URL, decoded and as the URL spells it).
// A URL's password shorter than minSecretLen is an error, which names the setting and never
// the value: it could be neither redacted nor told apart from ordinary text.
func SettingSecrets(entries []string) ([]string, error) {
	list, err := secretform.Settings(entries)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.Value
	}
	return out, nil
}
