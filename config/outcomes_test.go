package config

import (
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/outcome"
)

// TestOutcomes: the reconciliation's settings, their defaults, 0 turning the periodic round
// off, and what is refused (a budget that cannot open a repository and read one pull request).
func TestOutcomes(t *testing.T) {
	t.Parallel()
	cfg, err := LoadService(envMap(serviceEnv(t)), true)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Queue.OutcomesInterval != outcome.DefaultInterval || cfg.Outcomes.MaxAge != outcome.DefaultMaxAge || cfg.Outcomes.Budget != outcome.DefaultBudget {
		t.Errorf("defaults: interval %s, %+v", cfg.Queue.OutcomesInterval, cfg.Outcomes)
	}
	env := serviceEnv(t)
	env["FROGNANO_OUTCOMES_INTERVAL"], env["FROGNANO_OUTCOMES_MAX_AGE"], env["FROGNANO_OUTCOMES_BUDGET"] = "0", "48h", "12"
	if cfg, err = LoadService(envMap(env), true); err != nil {
		t.Fatal(err)
	}
	if cfg.Queue.OutcomesInterval != 0 || cfg.Outcomes.MaxAge != 48*time.Hour || cfg.Outcomes.Budget != 12 {
		t.Errorf("set: interval %s, %+v", cfg.Queue.OutcomesInterval, cfg.Outcomes)
	}
	if c, err := Outcomes(envMap(env)); err != nil || c.MaxAge != 48*time.Hour || c.Budget != 12 {
		t.Errorf("Outcomes() = %+v, %v", c, err)
	}
	env["FROGNANO_OUTCOMES_BUDGET"], env["FROGNANO_OUTCOMES_MAX_AGE"], env["FROGNANO_OUTCOMES_INTERVAL"] = "3", "0s", "-1m"
	_, err = LoadService(envMap(env), true)
	for _, want := range []string{"FROGNANO_OUTCOMES_BUDGET must be at least 4", "FROGNANO_OUTCOMES_MAX_AGE must be positive", `FROGNANO_OUTCOMES_INTERVAL="-1m"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}
