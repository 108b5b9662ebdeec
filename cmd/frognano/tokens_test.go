package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The command lines of `frognano tokens` and `frognano runs start` that cannot work are usage
// errors (exit 2) that say what to change, before any database or API is asked.
func TestTokensAndRunsStartUsage(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATABASE_URL": "postgres://nobody@127.0.0.1:1/none"}
	for _, c := range []struct {
		args []string
		env  map[string]string
		says string
	}{
		{[]string{"tokens"}, env, "needs create, list or revoke"},
		{[]string{"tokens", "create", "--repo", "acme/widgets"}, env, "needs --name"},
		{[]string{"tokens", "create", "--name", "x"}, env, "a token needs a scope"},
		{[]string{"tokens", "create", "--name", "x", "--repo", "acme"}, env, `"acme" is not OWNER/REPO`},
		{[]string{"tokens", "create", "--name", "x", "--installation", "-3"}, env, "is not an installation id"},
		{[]string{"tokens", "revoke"}, env, "needs a token id"},
		{[]string{"tokens", "revoke", "x"}, env, `token id "x"`},
		{[]string{"tokens", "list", "--name", "x"}, env, "are for frognano tokens create"},
		{[]string{"tokens", "list"}, map[string]string{}, "DATABASE_URL is not set"},
		{[]string{"runs", "start"}, env, "needs OWNER/REPO#N"},
		{[]string{"runs", "start", "acme/widgets"}, env, "is not OWNER/REPO#N"},
		{[]string{"runs", "start", "acme/widgets#3", "--attempts", "99"}, env, `option "attempts"`},
		{[]string{"runs", "start", "acme/widgets#3"}, env, "FROGNANO_API_URL is not set"},
		{[]string{"runs", "start", "acme/widgets#3"}, map[string]string{"FROGNANO_API_URL": "ftp://x"}, "must be an http or https address"},
		{[]string{"runs", "start", "acme/widgets#3"}, map[string]string{"FROGNANO_API_URL": "https://x"}, "FROGNANO_API_TOKEN is not set"},
	} {
		var out, errOut bytes.Buffer
		err := run(context.Background(), c.args, func(k string) string { return c.env[k] }, &out, &errOut)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), c.says) {
			t.Errorf("frognano %s: %v (exit %d), want a usage error saying %q", strings.Join(c.args, " "), err, exitCode(err), c.says)
		}
	}
}
