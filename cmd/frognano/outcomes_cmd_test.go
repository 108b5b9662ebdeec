package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestOutcomesCommandBadArguments: `frognano outcomes` says what it needs, with exit status 2,
// before it opens anything.
func TestOutcomesCommandBadArguments(t *testing.T) {
	t.Parallel()
	env := map[string]string{}
	for _, tt := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, env, "frognano outcomes needs sync"},
		{[]string{"list"}, env, "frognano outcomes needs sync"},
		{[]string{"sync", "--budget", "3"}, env, "--budget must be at least 4"},
		{[]string{"sync", "extra"}, env, `unexpected argument "extra"`},
		{[]string{"sync"}, env, "DATABASE_URL is not set"},
		{[]string{"sync"}, map[string]string{"FROGNANO_OUTCOMES_MAX_AGE": "0s"}, "FROGNANO_OUTCOMES_MAX_AGE must be positive"},
		{[]string{"sync"}, map[string]string{"DATABASE_URL": "postgres://x@127.0.0.1:1/x"}, "GitHub App config"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"outcomes"}, tt.args...), func(k string) string { return tt.env[k] }, &stdout, &stderr)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("frognano outcomes %v: %v, want a usage error saying %q", tt.args, err, tt.want)
		}
	}
}
