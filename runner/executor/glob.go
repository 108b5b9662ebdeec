package executor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"syscall"
	"unicode/utf8"
)

// The Glob tool is Python's glob.glob(root / pattern, recursive=True) followed by
// is_file(), display and sorted(). Go's path/filepath.Glob has no "**" and treats hidden
// files differently, so the parts of CPython 3.11's glob and fnmatch that decide the result
// are ported here: "**" matches zero or more directories, wildcards never match a name
// starting with "." unless the pattern component starts with ".", "**" does not enter
// hidden directories, symlinked directories are followed, duplicates (e.g. "**/**") are
// kept. The one deliberate difference: a directory already on the current "**" descent
// (a symlink loop) is not entered again, where Python recurses until the kernel refuses.

func toolGlob(cwd string, args *pyDict) (string, error) {
	pattern := falsyEmptyStr(args, "pattern")
	if pattern == "" {
		return "", pyError("ValueError", "pattern is required")
	}
	rootArg, _ := args.get("path")
	if !pyTruthy(rootArg) {
		rootArg = "."
	}
	root, err := resolveArg(cwd, rootArg)
	if err != nil {
		return "", err
	}
	g := &globber{matchers: map[string]*globPattern{}}
	found, err := g.iglob(joinPath(root, pattern), false)
	if err != nil {
		return "", err
	}
	var matches []string
	for _, m := range found {
		// Path(match) drops a trailing slash, so "file.txt/" (what "file.txt/**" yields
		// first) is the file itself.
		p := purePath(m)
		ok, err := isFile(p)
		if err != nil {
			return "", err
		}
		if !ok {
			continue
		}
		shown, err := display(cwd, p)
		if err != nil {
			return "", err
		}
		matches = append(matches, shown)
	}
	if len(matches) == 0 {
		return "No files matched.", nil
	}
	// Python sorts str, whose code points for a name that is not UTF-8 are surrogateescape's
	// U+DC80..U+DCFF, one per undecodable byte.
	sort.SliceStable(matches, func(i, j int) bool { return pyLess(matches[i], matches[j]) })
	shown := matches[:min(len(matches), globLimit)]
	out := strings.Join(shown, "\n")
	if len(matches) > globLimit {
		out += fmt.Sprintf("\n... %d more files", len(matches)-globLimit)
	}
	return out, nil
}

func hasMagic(s string) bool { return strings.ContainsAny(s, "*?[") }

func isHidden(name string) bool { return strings.HasPrefix(name, ".") }

// isFile is Path.is_file() of Python 3.11: a regular file after following symlinks. A
// missing file, a loop or a path through a non-directory is false, as is a NUL in the path;
// any other failure (permission denied, name too long) is raised.
func isFile(p string) (bool, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return false, nil
	}
	fi, err := os.Stat(p)
	if err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) {
			switch errno {
			case syscall.ENOENT, syscall.ENOTDIR, syscall.EBADF, syscall.ELOOP:
				return false, nil
			}
		}
		return false, osError(err, p)
	}
	return fi.Mode().IsRegular(), nil
}

// pyLess orders two names as Python orders the str it decodes them to (surrogateescape).
func pyLess(a, b string) bool {
	for a != "" && b != "" {
		ra, na := fsRune(a)
		rb, nb := fsRune(b)
		if ra != rb {
			return ra < rb
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) < len(b)
}

// fsRune decodes the first character of a file name as os.fsdecode does: a byte that does
// not start valid UTF-8 is U+DC80+byte.
func fsRune(s string) (rune, int) {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && n == 1 {
		return 0xDC00 + rune(s[0]), 1
	}
	return r, n
}

func lexists(p string) bool {
	if strings.IndexByte(p, 0) >= 0 {
		return false
	}
	_, err := os.Lstat(p)
	return err == nil
}

func isDir(p string) bool {
	if strings.IndexByte(p, 0) >= 0 {
		return false
	}
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

type globber struct {
	matchers map[string]*globPattern
	// onPath holds the directories (device, inode) of the current "**" descent.
	onPath map[[2]uint64]bool
}

// iglob is glob._iglob.
func (g *globber) iglob(pathname string, dironly bool) ([]string, error) {
	dirname, basename := splitPath(pathname)
	if !hasMagic(pathname) {
		if basename != "" {
			if lexists(pathname) {
				return []string{pathname}, nil
			}
		} else if isDir(dirname) {
			return []string{pathname}, nil
		}
		return nil, nil
	}
	if dirname == "" {
		return g.globIn(dirname, basename, dironly)
	}
	dirs := []string{dirname}
	if dirname != pathname && hasMagic(dirname) {
		var err error
		if dirs, err = g.iglob(dirname, true); err != nil {
			return nil, err
		}
	}
	var out []string
	for _, d := range dirs {
		names, err := g.globIn(d, basename, dironly)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			out = append(out, pyJoin(d, n))
		}
	}
	return out, nil
}

// globIn picks _glob2 ("**"), _glob1 (a wildcard) or _glob0 (a literal name).
func (g *globber) globIn(dirname, basename string, dironly bool) ([]string, error) {
	switch {
	case basename == "**":
		return g.glob2(dirname, dironly)
	case hasMagic(basename):
		return g.glob1(dirname, basename, dironly)
	case basename != "":
		if lexists(pyJoin(dirname, basename)) {
			return []string{basename}, nil
		}
	default:
		if isDir(dirname) {
			return []string{""}, nil
		}
	}
	return nil, nil
}

func (g *globber) glob1(dirname, pattern string, dironly bool) ([]string, error) {
	names, err := listDir(dirname, dironly)
	if err != nil {
		return nil, err
	}
	m := g.matchers[pattern]
	if m == nil {
		m = compileGlob(pattern)
		g.matchers[pattern] = m
	}
	var out []string
	for _, n := range names {
		if isHidden(n) && !isHidden(pattern) {
			continue
		}
		if m.match(n) {
			out = append(out, n)
		}
	}
	return out, nil
}

func (g *globber) glob2(dirname string, dironly bool) ([]string, error) {
	// Python 3.11's _glob2 yields "" whatever dirname is: "file.txt/**" matches
	// "file.txt/", which Path() reads as the file.
	out := []string{""}
	g.onPath = map[[2]uint64]bool{}
	if id, ok := dirID(dirname); ok {
		g.onPath[id] = true
	}
	rest, err := g.rlistdir(dirname, dironly)
	return append(out, rest...), err
}

func (g *globber) rlistdir(dirname string, dironly bool) ([]string, error) {
	names, err := listDir(dirname, dironly)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, x := range names {
		if isHidden(x) {
			continue
		}
		out = append(out, x)
		path := pyJoin(dirname, x)
		id, ok := dirID(path)
		if !ok || g.onPath[id] {
			continue // not a directory (nothing to list), or a symlink loop
		}
		g.onPath[id] = true
		sub, err := g.rlistdir(path, dironly)
		delete(g.onPath, id)
		if err != nil {
			return nil, err
		}
		for _, y := range sub {
			out = append(out, pyJoin(x, y))
		}
	}
	return out, nil
}

func dirID(p string) ([2]uint64, bool) {
	fi, err := os.Stat(p)
	if err != nil || !fi.IsDir() {
		return [2]uint64{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return [2]uint64{}, false
	}
	return [2]uint64{uint64(st.Dev), st.Ino}, true
}

// listDir is glob._listdir: the names in dirname (only directories when dironly, symlinks
// followed); an unreadable directory lists nothing, a NUL in the path is Python's ValueError.
func listDir(dirname string, dironly bool) ([]string, error) {
	if strings.IndexByte(dirname, 0) >= 0 {
		return nil, nulError
	}
	if dirname == "" {
		dirname = "."
	}
	// os.scandir's order, not sorted: it decides which error a Glob meets first.
	f, err := os.Open(dirname)
	if err != nil {
		return nil, nil
	}
	entries, _ := f.ReadDir(-1)
	f.Close()
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if dironly {
			isDirEntry := e.IsDir()
			if e.Type()&fs.ModeSymlink != 0 {
				isDirEntry = isDir(pyJoin(dirname, e.Name()))
			}
			if !isDirEntry {
				continue
			}
		}
		names = append(names, e.Name())
	}
	return names, nil
}
