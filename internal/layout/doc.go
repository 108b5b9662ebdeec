// Package layout holds the house's rules about which packages may import which: the folders
// show the trust boundary, and its test checks them against what `go list` says the code
// imports, so an arrow that runs the wrong way fails `go test ./internal/layout`.
//
// The sides: githubapp holds GitHub's credentials (the App key, installation tokens); runner
// and its packages run beside the untrusted sandbox; check and its packages judge what comes
// out of a sandbox (the patch, the published tree, secrets, dependencies, scanners' output) and
// are used by both; runner/audit runs those checks on one run's patch, on the sandbox side.
// report renders a run's Result as the text people read: it imports runner for its types,
// never the credential side, and runner never imports it. The credential side never imports
// the sandbox side, the sandbox side never imports the credential side, and the check
// packages import neither. Package config, which builds both sides' configurations, is
// imported by cmd/ alone, and it alone reads settings from the environment (settings_test.go).
//
// It also holds the rule of one writer per table (writers_test.go): SQL that writes the runs
// table appears only in run's Store (run/store.go, run/store_*.go), which every other package
// calls through named methods, and the budgets and run_audit tables keep their one writer each.
//
// It also checks where what GitHub shows a person is worded: one file per kind (textFiles in
// text_test.go: the status comment, refusals, notices, replies, the pull request). Its text
// scan (textscan_test.go) type-checks the packages that write to GitHub and follows every
// comment's body and every field of a comment's or pull request's text back to its string
// literals: a sentence that reaches GitHub from outside those files fails
// TestGitHubTextInTextFiles, which names the file, the line and how the text gets there.
//
// It has no code of its own and must never gain any: it is a test.
package layout
