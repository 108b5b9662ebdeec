// Package scanner owns the operator's own scanners (FROGNANO_SCANNERS): what the operator
// configured (which scanners, their configuration files, whether they run the repository's
// code), the tree each one scans, the suppression comments a patch adds, and turning the SARIF a
// scanner wrote into findings on the lines a patch added or changed.
//
// Which scanners run is the operator's choice alone: Parse reads the setting, and nothing of
// a repository or a patch is ever read to decide it. The runner runs each scanner on the
// patched tree in a sealed sandbox of its own; this package runs nothing in a sandbox. On the
// host it runs only git, through the patch.Git it is given, over the host's own clone in a
// throwaway index (patch.Scratch): Trees puts each scanner's configuration files back as the
// base commit has them, from git's objects, never from a tree a sandbox wrote.
//
// Everything a scanner writes is untrusted (the scanner reads files the model wrote, and may
// run the repository's code): Read bounds what it keeps, never panics, refuses locations
// outside the repository, and keeps a finding only when its region touches a line git's own
// diff of the patched tree says the patch added or changed. Suppressions reads the patch's
// added lines the same way: bounded, linear, never trusting their shape.
//
// It is one of the check packages (check/...): it must never hold a credential, start or reach a
// sandbox, talk to GitHub or the network, or import runner, githubapp, queue, run, server or web
// (internal/layout's test checks the imports).
package scanner
