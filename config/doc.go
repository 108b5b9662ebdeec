// Package config owns frognano's settings: every environment variable the service and its
// commands read (FROGNANO_*, GITHUB_*, DATABASE_URL) is declared here once, with its name, its
// default, its parser and a line of documentation (vars.go; Vars lists them for the
// documents' test), and read here only, through a getenv function passed in (so that tests
// run in parallel). It turns them into the typed configurations the other packages take
// (githubapp.Config, auth.Config, runner.Config with runner/env's and runner/sandbox's,
// queue.Config, run.Budgets), collecting every bad value so that one start reports all of
// them; cmd/ asks it and passes them on.
//
// It never puts a secret's value in an error: only the readers of numbers, durations, booleans
// and sizes quote what they were given, and no secret is one of those. It must never be
// imported by the packages it configures (it imports both sides of the trust boundary:
// internal/layout checks that only cmd/ reaches it), and no other package reads a setting from
// the environment (internal/layout TestSettingsAreReadInConfig).
package config
