package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// osvDir reads FROGNANO_OSV_DIR: the operator's offline copy of OSV's per-ecosystem exports
// (DIR/<Ecosystem>/all.zip), which must be an existing directory given by an absolute path. A
// missing or unreadable export inside it is not an error of the start: each run says which
// ecosystems it could not check.
func (e env) osvDir(name string) string {
	dir := e.String(name, "")
	if dir == "" {
		return ""
	}
	if !filepath.IsAbs(dir) {
		e.Add(fmt.Errorf("%s is %q: want an absolute path", name, dir))
		return ""
	}
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		e.Add(fmt.Errorf("%s is %q, which is not a directory", name, dir))
		return ""
	}
	return filepath.Clean(dir)
}
