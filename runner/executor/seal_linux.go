package executor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"github.com/frognano/frognano/internal/secretform"
)

// Constants the syscall package does not name: lseek's whence values for sparse files
// (linux/fs.h), and O_PATH (the same on amd64 and arm64, the architectures frognano builds).
const (
	seekData = 3
	seekHole = 4
	oPath    = 0x200000
)

// run checks every path of the request.
func (s *sealer) run(ctx context.Context, root string) error {
	mounts, err := mountPoints(root)
	if err != nil {
		return fmt.Errorf("reading the mount table: %w", err)
	}
	rootFD, err := syscall.Open(root, oPath|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening %s: %w", root, err)
	}
	defer syscall.Close(rootFD)
	for i, p := range s.req.Paths {
		if err := s.check(ctx); err != nil {
			return err
		}
		if m, ok := s.m.Find([]byte(p)); ok {
			if err := s.found(i, SealInName, m); err != nil {
				return err
			}
		}
		skip, why := s.path(p, mounts)
		if why != "" {
			if err := s.report(SealLine{Path: i, Problem: why}); err != nil {
				return err
			}
			continue
		}
		if skip {
			continue
		}
		if err := s.pathContent(ctx, rootFD, i, p); err != nil {
			return err
		}
	}
	return nil
}

// path says why p cannot be checked as the layer holds it ("" when it can): a mount of the
// container (a volume, a tmpfs) over a directory on its way shows something else there. A path
// that is itself a mount point (the engine's placeholder for the init binary or /etc/hosts, the
// workspace's directory) is skipped: what the layer holds there is what every sandbox made from
// the image mounts over too (runner/sandbox gives the setup container the sandboxes' mounts),
// and reading it would read the mount.
func (s *sealer) path(p string, mounts map[string]bool) (skip bool, why string) {
	parts, why := components(p)
	if why != "" {
		return false, why
	}
	for i := 1; i < len(parts); i++ {
		if mp := "/" + strings.Join(parts[:i], "/"); mounts[mp] {
			return false, fmt.Sprintf("a mount of the container (at %q) hides it", mp)
		}
	}
	return mounts[p], ""
}

// pathContent checks what path i holds: a regular file's bytes, a link's target, extended
// attributes. A path it cannot read is reported as a problem.
func (s *sealer) pathContent(ctx context.Context, rootFD, i int, p string) error {
	parts, _ := components(p)
	dfd, name, err := walk(rootFD, parts)
	if err != nil {
		return s.report(SealLine{Path: i, Problem: notRead(p, err)})
	}
	defer closeUnlessRoot(dfd, rootFD)
	var st syscall.Stat_t
	if err := fstatat(dfd, name, &st); err != nil {
		return s.report(SealLine{Path: i, Problem: notRead(p, err)})
	}
	if m, ok, err := s.xattrs(dfd, name); err != nil {
		return s.report(SealLine{Path: i, Problem: "its extended attributes could not be read: " + err.Error()})
	} else if ok {
		if err := s.found(i, SealInXattr, m); err != nil {
			return err
		}
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFLNK:
		target, err := readlinkat(dfd, name)
		if err != nil {
			return s.report(SealLine{Path: i, Problem: notRead(p, err)})
		}
		if m, ok := s.m.Find([]byte(target)); ok {
			return s.found(i, SealInLink, m)
		}
	case syscall.S_IFREG:
		key := [2]uint64{uint64(st.Dev), st.Ino}
		r, ok := s.seen[key]
		if !ok {
			var err error
			if r, err = s.readFile(ctx, dfd, name, &st); err != nil {
				return err // the deadline or the budget
			}
			s.seen[key] = r
		}
		switch {
		case r.problem != "":
			return s.report(SealLine{Path: i, Problem: r.problem})
		case r.found:
			return s.found(i, SealInContent, r.match)
		}
	}
	// Directories hold names, which the engine lists as paths of their own; a FIFO, a socket
	// or a device holds nothing an image keeps, and is never opened.
	return nil
}

// readFile reads one regular file, skipping its holes. Its problems are in the result; the
// error is the check's end (deadline, budget).
func (s *sealer) readFile(ctx context.Context, dfd int, name string, st *syscall.Stat_t) (*fileResult, error) {
	fd, err := openat(dfd, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC)
	if err != nil {
		return &fileResult{problem: "it could not be opened: " + err.Error()}, nil
	}
	defer syscall.Close(fd)
	var now syscall.Stat_t
	if err := syscall.Fstat(fd, &now); err != nil || now.Ino != st.Ino || now.Dev != st.Dev || now.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return &fileResult{problem: "it changed while it was being read"}, nil
	}
	s.files++
	stream := s.m.Stream()
	for off := int64(0); off < now.Size; {
		start, err := seek(fd, off, seekData)
		switch {
		case errors.Is(err, syscall.ENXIO):
			off = now.Size // only a hole is left
			continue
		case errors.Is(err, syscall.EINVAL), errors.Is(err, syscall.EOPNOTSUPP):
			start = off // no sparse-file support here: read it all
		case err != nil:
			return &fileResult{problem: "it could not be read: " + err.Error()}, nil
		}
		end, err := seek(fd, start, seekHole)
		if err != nil || end <= start {
			end = now.Size
		}
		stream.Reset() // what came before a hole cannot continue a form after it
		for pos := start; pos < end; {
			if err := s.check(ctx); err != nil {
				return nil, err
			}
			n, err := syscall.Pread(fd, s.buf[:min(int64(len(s.buf)), end-pos)], pos)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				return &fileResult{problem: "it could not be read: " + err.Error()}, nil
			}
			if n == 0 {
				break // shorter than it said
			}
			if err := s.countBytes(n); err != nil {
				return nil, err
			}
			stream.Write(s.buf[:n])
			pos += int64(n)
			if m, ok := stream.Found(); ok {
				return &fileResult{match: m, found: true}, nil
			}
		}
		off = end
	}
	m, ok := stream.Found()
	return &fileResult{match: m, found: ok}, nil
}

// xattrs looks for a value in the extended attributes of name in dfd (the link itself for a
// symbolic link): the image keeps security.capability, and a value there would be readable
// in every sandbox.
func (s *sealer) xattrs(dfd int, name string) (secretform.Match, bool, error) {
	p := "/proc/self/fd/" + strconv.Itoa(dfd) + "/" + name
	list := make([]byte, 64<<10)
	n, err := llistxattr(p, list)
	switch {
	case errors.Is(err, syscall.ENOTSUP), errors.Is(err, syscall.ENODATA):
		return secretform.Match{}, false, nil
	case err != nil:
		return secretform.Match{}, false, err
	}
	val := make([]byte, 64<<10)
	for _, attr := range strings.Split(strings.TrimSuffix(string(list[:n]), "\x00"), "\x00") {
		if attr == "" {
			continue
		}
		if m, ok := s.m.Find([]byte(attr)); ok {
			return m, true, nil
		}
		k, err := lgetxattr(p, attr, val)
		if errors.Is(err, syscall.ENODATA) || errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
			continue // trusted.* and the like: the image does not keep them
		}
		if err != nil {
			return secretform.Match{}, false, fmt.Errorf("%s: %w", attr, err)
		}
		if m, ok := s.m.Find(val[:k]); ok {
			return m, true, nil
		}
	}
	return secretform.Match{}, false, nil
}

// notRead says why a path the layer holds could not be read.
func notRead(p string, err error) string {
	switch {
	case errors.Is(err, syscall.ENOENT) && strings.ContainsRune(p, '\uFFFD'):
		return "it was not found: its name is not valid UTF-8, which the engine's list of changes cannot spell"
	case errors.Is(err, syscall.ENOENT):
		return "it was not found where the engine's list of changes says it is"
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.ELOOP):
		return "a directory on its way is not a directory (a symbolic link?)"
	}
	return "it could not be read: " + err.Error()
}

// walk opens each directory of parts but the last with O_NOFOLLOW, from rootFD, and returns the
// last directory's descriptor (rootFD itself for a top-level path) and the last name.
func walk(rootFD int, parts []string) (int, string, error) {
	dfd := rootFD
	for _, c := range parts[:len(parts)-1] {
		fd, err := openat(dfd, c, oPath|syscall.O_NOFOLLOW|syscall.O_DIRECTORY|syscall.O_CLOEXEC)
		closeUnlessRoot(dfd, rootFD)
		if err != nil {
			return -1, "", err
		}
		dfd = fd
	}
	return dfd, parts[len(parts)-1], nil
}

func closeUnlessRoot(fd, rootFD int) {
	if fd != rootFD && fd >= 0 {
		syscall.Close(fd)
	}
}

// mountPoints lists the mount points of this process's mount namespace under root (as paths
// from root), root itself left out: the kernel's /proc/self/mountinfo, field 5, octal escapes
// decoded.
func mountPoints(root string) (map[string]bool, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	root = strings.TrimSuffix(root, "/")
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			return nil, fmt.Errorf("unexpected line %q", sc.Text())
		}
		mp := unescapeMount(fields[4])
		if rel, ok := strings.CutPrefix(mp, root); ok && strings.HasPrefix(rel, "/") && rel != "/" {
			out[rel] = true
		}
	}
	return out, sc.Err()
}

// unescapeMount decodes mountinfo's \NNN octal escapes (space, tab, newline, backslash).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func openat(dfd int, name string, flags int) (int, error) {
	for {
		fd, err := syscall.Openat(dfd, name, flags, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// fstatat is lstat of name in dfd: the object itself, a symbolic link included (an O_PATH
// descriptor opened with O_NOFOLLOW refers to the link, and fstat reads it).
func fstatat(dfd int, name string, st *syscall.Stat_t) error {
	fd, err := openat(dfd, name, oPath|syscall.O_NOFOLLOW|syscall.O_CLOEXEC)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	return syscall.Fstat(fd, st)
}

func seek(fd int, off int64, whence int) (int64, error) {
	return syscall.Seek(fd, off, whence)
}

func readlinkat(dfd int, name string) (string, error) {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return "", err
	}
	buf := make([]byte, 4096)
	n, _, errno := syscall.Syscall6(syscall.SYS_READLINKAT, uintptr(dfd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
	if errno != 0 {
		return "", errno
	}
	return string(buf[:n]), nil
}

func llistxattr(path string, dest []byte) (int, error) {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return 0, err
	}
	n, _, errno := syscall.Syscall(syscall.SYS_LLISTXATTR, uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&dest[0])), uintptr(len(dest)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

func lgetxattr(path, attr string, dest []byte) (int, error) {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return 0, err
	}
	a, err := syscall.BytePtrFromString(attr)
	if err != nil {
		return 0, err
	}
	n, _, errno := syscall.Syscall6(syscall.SYS_LGETXATTR, uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(a)), uintptr(unsafe.Pointer(&dest[0])), uintptr(len(dest)), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
