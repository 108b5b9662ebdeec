package main

// runOwner is the sandbox owner of `frognano run` on a host whose service owner is owner:
// distinct, so that a run never removes the service's sandboxes and the service never removes
// a run's. Each run labels its sandboxes with its process (sandbox.ProcessInstance), so that
// what a killed run left can be told from what a live one still uses (sandbox.ProcessAlive).
func runOwner(owner string) string { return "run@" + owner }
