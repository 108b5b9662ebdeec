package executor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strings"
	"syscall"
)

// toolError is a tool failure rendered as the reference renders a Python exception:
// f"{type(exc).__name__}: {exc}".
type toolError struct {
	typ string
	msg string
}

func (e *toolError) Error() string { return e.typ + ": " + e.msg }

func pyError(typ, msg string) error { return &toolError{typ: typ, msg: msg} }

// errnoText is glibc's strerror for the errors file tools meet; Python prints these
// (Go's own texts are lower-case and would differ).
var errnoText = map[syscall.Errno]string{
	syscall.EPERM:        "Operation not permitted",
	syscall.ENOENT:       "No such file or directory",
	syscall.EIO:          "Input/output error",
	syscall.EBADF:        "Bad file descriptor",
	syscall.EACCES:       "Permission denied",
	syscall.EBUSY:        "Device or resource busy",
	syscall.EEXIST:       "File exists",
	syscall.EXDEV:        "Invalid cross-device link",
	syscall.ENODEV:       "No such device",
	syscall.ENOTDIR:      "Not a directory",
	syscall.EISDIR:       "Is a directory",
	syscall.EINVAL:       "Invalid argument",
	syscall.ENFILE:       "Too many open files in system",
	syscall.EMFILE:       "Too many open files",
	syscall.ETXTBSY:      "Text file busy",
	syscall.EFBIG:        "File too large",
	syscall.ENOSPC:       "No space left on device",
	syscall.EROFS:        "Read-only file system",
	syscall.ENAMETOOLONG: "File name too long",
	syscall.ELOOP:        "Too many levels of symbolic links",
	syscall.EDQUOT:       "Disk quota exceeded",
	syscall.ENXIO:        "No such device or address",
	syscall.EAGAIN:       "Resource temporarily unavailable",
	syscall.ENOMEM:       "Cannot allocate memory",
	syscall.EINTR:        "Interrupted system call",
}

// errnoClass is the OSError subclass Python raises for an errno (PEP 3151).
func errnoClass(e syscall.Errno) string {
	switch e {
	case syscall.ENOENT:
		return "FileNotFoundError"
	case syscall.EISDIR:
		return "IsADirectoryError"
	case syscall.ENOTDIR:
		return "NotADirectoryError"
	case syscall.EEXIST:
		return "FileExistsError"
	case syscall.EACCES, syscall.EPERM:
		return "PermissionError"
	case syscall.EINTR:
		return "InterruptedError"
	case syscall.EAGAIN:
		return "BlockingIOError"
	}
	return "OSError"
}

// osError renders a failed system call on filename as Python's OSError does:
// "[Errno 2] No such file or directory: '/repo/x.py'" (the filename is repr()'d).
func osError(err error, filename string) error {
	var te *toolError
	if errors.As(err, &te) {
		return te
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return pyError("OSError", fmt.Sprintf("%v: %s", err, pyStrRepr(filename)))
	}
	text, ok := errnoText[errno]
	if !ok {
		// Go's table is glibc's with a lower-case first letter.
		text = errno.Error()
		if text != "" {
			text = strings.ToUpper(text[:1]) + text[1:]
		}
	}
	return pyError(errnoClass(errno), fmt.Sprintf("[Errno %d] %s: %s", int(errno), text, pyStrRepr(filename)))
}

// osErrorNoFile renders a failure that Python reports without a file name: one raised by a
// read or write on a file that opened (a disk that is full, an I/O error), as
// "[Errno 28] No space left on device".
func osErrorNoFile(err error) error {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return pyError("OSError", err.Error())
	}
	text, ok := errnoText[errno]
	if !ok {
		text = errno.Error()
		if text != "" {
			text = strings.ToUpper(text[:1]) + text[1:]
		}
	}
	return pyError(errnoClass(errno), fmt.Sprintf("[Errno %d] %s", int(errno), text))
}

// nulError is what Python raises before any system call when a path holds a NUL byte.
var nulError = pyError("ValueError", "embedded null byte")

// purePath normalises a path the way pathlib.PurePosixPath does: repeated slashes and "."
// components go, ".." stays, a trailing slash goes, and exactly two leading slashes are
// kept (POSIX leaves "//" implementation-defined and pathlib preserves it).
func purePath(p string) string {
	if p == "" {
		return "."
	}
	root := ""
	if strings.HasPrefix(p, "/") {
		root = "/"
		if strings.HasPrefix(p, "//") && !strings.HasPrefix(p, "///") {
			root = "//"
		}
	}
	var parts []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			parts = append(parts, c)
		}
	}
	joined := root + strings.Join(parts, "/")
	if joined == "" {
		return "."
	}
	return joined
}

// joinPath is pathlib's "base / p" for an absolute base: an absolute p replaces base.
func joinPath(base, p string) string {
	p = purePath(p)
	if strings.HasPrefix(p, "/") {
		return p
	}
	if p == "." {
		return base
	}
	if strings.HasSuffix(base, "/") {
		return base + p
	}
	return base + "/" + p
}

// parentPath is PurePosixPath.parent.
func parentPath(p string) string {
	i := strings.LastIndexByte(p, '/')
	switch {
	case i < 0:
		return "."
	case strings.TrimRight(p[:i+1], "/") == "":
		return p[:i+1] // "/" or "//"
	}
	return p[:i]
}

// resolveArg is the reference's _resolve: str(value), "~" expanded, and a relative path
// joined to the working directory (whose physical path is cwd).
func resolveArg(cwd string, value any) (string, error) {
	p := purePath(pyStr(value))
	if strings.HasPrefix(p, "~") {
		first, rest, _ := strings.Cut(p, "/")
		home, err := expandUser(first)
		if err != nil {
			return "", err
		}
		if rest != "" {
			p = joinPath(purePath(home), rest)
		} else {
			p = purePath(home)
		}
	}
	if strings.HasPrefix(p, "/") {
		return p, nil
	}
	return joinPath(cwd, p), nil
}

// expandUser is os.path.expanduser for a first component "~" or "~name". Like the
// reference it reads HOME (the sandbox sets it; it is not configuration).
func expandUser(first string) (string, error) {
	var home string
	if first == "~" {
		if h, ok := os.LookupEnv("HOME"); ok {
			home = h
		} else if u, err := user.Current(); err == nil {
			home = u.HomeDir
		} else {
			return "", pyError("RuntimeError", "Could not determine home directory.")
		}
	} else {
		u, err := user.Lookup(first[1:])
		if err != nil {
			return "", pyError("RuntimeError", "Could not determine home directory.")
		}
		home = u.HomeDir
	}
	home = strings.TrimRight(home, "/")
	if home == "" {
		home = "/"
	}
	// Path.expanduser refuses a result that still starts with "~" (HOME="~", a user whose
	// home is "~x"): os.path.expanduser gave the path back unexpanded.
	if strings.HasPrefix(home, "~") {
		return "", pyError("RuntimeError", "Could not determine home directory.")
	}
	return home, nil
}

// realPath is os.path.realpath(p, strict=False) for an absolute p, ported from CPython
// 3.11 so that symlinks, missing components and ".." resolve exactly as the reference saw.
func realPath(p string) string {
	r, _ := joinRealPath("/", p, map[string]*string{})
	return r
}

func joinRealPath(path, rest string, seen map[string]*string) (string, bool) {
	if strings.HasPrefix(rest, "/") {
		rest = strings.TrimLeft(rest, "/")
		path = "/"
	}
	for rest != "" {
		var name string
		name, rest, _ = strings.Cut(rest, "/")
		if name == "" || name == "." {
			continue
		}
		if name == ".." {
			if path != "" {
				var tail string
				path, tail = splitPath(path)
				if tail == ".." {
					path = pyJoin(path, "../..")
				}
			} else {
				path = ".."
			}
			continue
		}
		newpath := pyJoin(path, name)
		fi, err := os.Lstat(newpath)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			path = newpath
			continue
		}
		if prev, ok := seen[newpath]; ok {
			if prev != nil {
				path = *prev
				continue
			}
			return pyJoin(newpath, rest), false // a symlink loop
		}
		seen[newpath] = nil
		target, err := os.Readlink(newpath)
		if err != nil {
			path = newpath
			continue
		}
		var ok bool
		path, ok = joinRealPath(path, target, seen)
		if !ok {
			return pyJoin(path, rest), false
		}
		resolved := path
		seen[newpath] = &resolved
	}
	return path, true
}

// splitPath is os.path.split.
func splitPath(p string) (string, string) {
	i := strings.LastIndexByte(p, '/') + 1
	head, tail := p[:i], p[i:]
	if head != "" && strings.Trim(head, "/") != "" {
		head = strings.TrimRight(head, "/")
	}
	return head, tail
}

// pyJoin is os.path.join for two parts.
func pyJoin(a, b string) string {
	switch {
	case strings.HasPrefix(b, "/"):
		return b
	case a == "" || strings.HasSuffix(a, "/"):
		return a + b
	}
	return a + "/" + b
}

// display is the reference's _display: the resolved path relative to the resolved working
// directory when inside it, otherwise the path as given (absolute, unresolved).
func display(cwd, p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", nulError
	}
	r := purePath(realPath(p))
	// pathlib's resolve() stats the result and turns ELOOP into RuntimeError.
	if _, err := os.Stat(r); errors.Is(err, syscall.ELOOP) {
		return "", pyError("RuntimeError", "Symlink loop from "+pyStrRepr(r))
	}
	switch {
	case r == cwd:
		return ".", nil
	case cwd == "/":
		return strings.TrimPrefix(r, "/"), nil
	case strings.HasPrefix(r, cwd+"/"):
		return r[len(cwd)+1:], nil
	}
	return p, nil
}
