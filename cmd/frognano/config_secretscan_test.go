package main

import (
	"strings"
	"testing"

	"github.com/frognano/frognano/check/secrets"
)

// TestSecretsSetting: FROGNANO_SECRETS picks what a secret found in a patch does; unset it
// blocks, and a value that is neither block nor warn stops the start with a line naming it.
func TestSecretsSetting(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]secrets.Mode{"": secrets.Block, "block": secrets.Block, "warn": secrets.Warn} {
		cfg, err := runnerConfig(envMap(map[string]string{"FROGNANO_SECRETS": in}))
		if err != nil || cfg.Secrets != want {
			t.Errorf("FROGNANO_SECRETS=%q: %q, %v; want %q", in, cfg.Secrets, err, want)
		}
	}
	if _, err := runnerConfig(envMap(map[string]string{"FROGNANO_SECRETS": "off"})); err == nil || !strings.Contains(err.Error(), "FROGNANO_SECRETS") {
		t.Errorf("FROGNANO_SECRETS=off: err = %v, want a refusal naming the setting", err)
	}
}
