package patch

import (
	"path"
	"strings"
)

// A file the patch adds at the top of the repository can take the place of a module the
// test runner or the tests import: `python -m pytest` and `python -m unittest` put the
// working directory first on sys.path, so a new pytest.py, pytest/ or unittest.py is what
// runs instead of the real runner, and can report anything it likes.

// pythonStdlib is sys.stdlib_module_names of CPython 3.11 without the private (underscore)
// modules, one of the sources of names a top-level module must not take.
var pythonStdlib = strings.Fields(`
__future__ abc aifc antigravity argparse array ast asynchat asyncio asyncore atexit audioop
base64 bdb binascii bisect builtins bz2 cProfile calendar cgi cgitb chunk cmath cmd code codecs
codeop collections colorsys compileall concurrent configparser contextlib contextvars copy
copyreg crypt csv ctypes curses dataclasses datetime dbm decimal difflib dis distutils doctest
email encodings ensurepip enum errno faulthandler fcntl filecmp fileinput fnmatch fractions
ftplib functools gc genericpath getopt getpass gettext glob graphlib grp gzip hashlib heapq
hmac html http idlelib imaplib imghdr imp importlib inspect io ipaddress itertools json keyword
lib2to3 linecache locale logging lzma mailbox mailcap marshal math mimetypes mmap modulefinder
msilib msvcrt multiprocessing netrc nis nntplib nt ntpath nturl2path numbers opcode operator
optparse os ossaudiodev pathlib pdb pickle pickletools pipes pkgutil platform plistlib poplib
posix posixpath pprint profile pstats pty pwd py_compile pyclbr pydoc pydoc_data pyexpat queue
quopri random re readline reprlib resource rlcompleter runpy sched secrets select selectors
shelve shlex shutil signal site smtpd smtplib sndhdr socket socketserver spwd sqlite3
sre_compile sre_constants sre_parse ssl stat statistics string stringprep struct subprocess
sunau symtable sys sysconfig syslog tabnanny tarfile telnetlib tempfile termios textwrap this
threading time timeit tkinter token tokenize tomllib trace traceback tracemalloc tty turtle
turtledemo types typing unicodedata unittest urllib uu uuid venv warnings wave weakref
webbrowser winreg winsound wsgiref xdrlib xml xmlrpc zipapp zipfile zipimport zlib zoneinfo
`)

// pythonTestModules are the test runners and the libraries they load, by import name.
var pythonTestModules = []string{
	"pytest", "_pytest", "pluggy", "py", "iniconfig", "packaging", "nose", "nose2", "coverage",
	"hypothesis", "pytest_asyncio", "pytest_cov", "pytest_mock", "xdist", "tox", "nox", "green",
}

var shadowable = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range pythonStdlib {
		m[n] = true
	}
	for _, n := range pythonTestModules {
		m[n] = true
	}
	return m
}()

// shadowedModule returns the module that a file at lp (lower-cased, repository-relative)
// would shadow on sys.path, or "": a top-level name.py, name/ (a package) or a top-level
// name.pth-free extension module such as name.so.
func shadowedModule(lp string) string {
	first, rest, nested := strings.Cut(lp, "/")
	name := first
	if !nested {
		ext := path.Ext(first)
		switch ext {
		case ".py", ".pyc", ".so", ".pyd":
			name = strings.TrimSuffix(first, ext)
			if i := strings.IndexByte(name, '.'); i >= 0 && ext != ".py" {
				name = name[:i] // name.cpython-311-x86_64-linux-gnu.so
			}
		default:
			return ""
		}
	} else if !strings.HasSuffix(rest, ".py") && !strings.HasSuffix(rest, ".so") {
		return ""
	}
	if shadowable[name] {
		return name
	}
	return ""
}
