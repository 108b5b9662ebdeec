// Package scanner owns the operator's own scanners (FROGNANO_SCANNERS): what the operator
// configured, and turning the SARIF a scanner wrote into findings on the lines a patch added
// or changed.
//
// Which scanners run is the operator's choice alone: Parse reads the setting, and nothing of
// a repository or a patch is ever read to decide it. The runner runs each scanner on the
// patched tree in a sealed sandbox of its own; this package runs nothing.
//
// Everything a scanner writes is untrusted (the scanner reads files the model wrote, and the
// model's processes may have outlived their commands): Read bounds what it keeps, never
// panics, refuses locations outside the repository, and keeps a finding only when its region
// touches a line git's own diff of the patched tree says the patch added or changed.
package scanner
