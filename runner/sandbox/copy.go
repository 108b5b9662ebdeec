package sandbox

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/docker/docker/api/types/container"
)

// CopyRepo streams hostDir, a git checkout, into the workspace as a tar whose every entry is owned
// by the sandbox user. The host directory is only read. The copy carries no credential: .git/config
// is replaced by a fresh one (core settings only, no remote), and the parts of .git that are host
// state or can run code (hooks, logs, FETCH_HEAD, submodule repositories, alternates) are left out.
// Symbolic links are copied as links, never followed; sockets, devices and FIFOs are skipped.
func (s *Sandbox) CopyRepo(ctx context.Context, hostDir string) error {
	root, err := filepath.Abs(hostDir)
	if err != nil {
		return fmt.Errorf("resolving the repository path: %w", err)
	}
	if fi, err := os.Lstat(filepath.Join(root, ".git")); err == nil && !fi.IsDir() {
		return fmt.Errorf("copying the repository: %s/.git is not a directory (worktrees and submodule checkouts are not supported)", root)
	}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(writeRepoTar(pw, root, s.uid, s.gid))
	}()
	err = s.docker.CopyToContainer(ctx, s.id, s.cfg.Workdir, pr, container.CopyToContainerOptions{})
	// Unblock the writer if the engine stopped reading early; the writer's own error, if any,
	// is what CopyToContainer saw first through the pipe.
	pr.CloseWithError(errors.New("copy ended"))
	if err != nil {
		return fmt.Errorf("copying the repository into the sandbox: %w", err)
	}
	return nil
}

// writeRepoTar writes the tar of root for CopyRepo.
func writeRepoTar(w io.Writer, root string, uid, gid int) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	tw := tar.NewWriter(bw)
	// The workspace root itself: a volume for a path the image lacks starts out owned by root.
	if err := tw.WriteHeader(&tar.Header{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755, Uid: uid, Gid: gid, Format: tar.FormatPAX}); err != nil {
		return err
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch gitEntry(rel) {
		case gitSkip:
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		case gitConfig:
			cfg, err := os.ReadFile(p)
			if err != nil {
				return fmt.Errorf("reading .git/config: %w", err)
			}
			return writeFile(tw, rel, 0o644, uid, gid, SanitizedGitConfig(cfg))
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr := &tar.Header{
			Name:    rel,
			Mode:    int64(info.Mode().Perm()),
			ModTime: info.ModTime(),
			Uid:     uid,
			Gid:     gid,
			Format:  tar.FormatPAX,
		}
		switch {
		case info.Mode().IsRegular():
			hdr.Typeflag = tar.TypeReg
			hdr.Size = info.Size()
		case info.IsDir():
			hdr.Typeflag = tar.TypeDir
			hdr.Name += "/"
		case info.Mode()&fs.ModeSymlink != 0:
			hdr.Typeflag = tar.TypeSymlink
			if hdr.Linkname, err = os.Readlink(p); err != nil {
				return err
			}
		default:
			return nil // sockets, devices, FIFOs: nothing a repository needs
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		// CopyN keeps the entry exactly as long as its header said even if the file changed.
		_, err = io.CopyN(tw, f, hdr.Size)
		return err
	})
	if err != nil {
		return fmt.Errorf("packing the repository: %w", err)
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("packing the repository: %w", err)
	}
	return bw.Flush()
}

func writeFile(tw *tar.Writer, name string, mode int64, uid, gid int, content []byte) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: mode, Size: int64(len(content)), Uid: uid, Gid: gid, Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err := tw.Write(content)
	return err
}

type gitAction int

const (
	gitCopy gitAction = iota
	gitSkip
	gitConfig
)

// gitEntry decides what happens to one path (slash-separated, relative to the checkout) of the
// repository's own .git directory. Paths outside .git are copied.
func gitEntry(rel string) gitAction {
	in, ok := strings.CutPrefix(rel, ".git/")
	if !ok {
		return gitCopy
	}
	switch {
	case in == "config":
		return gitConfig
	case strings.HasPrefix(in, "hooks/"), // code that git would run
		in == "FETCH_HEAD", // names the remote URL
		in == "logs" || strings.HasPrefix(in, "logs/"),                        // reflogs: host history, may hold URLs
		in == "modules" || strings.HasPrefix(in, "modules/"),                  // submodule repositories with their own configs
		in == "objects/info/alternates", in == "objects/info/http-alternates", // host paths, URLs
		in == "config.worktree",                              // per-worktree config: could set hooksPath, fsmonitor...
		in == "remotes" || strings.HasPrefix(in, "remotes/"), // legacy remote definitions: URLs
		in == "branches" || strings.HasPrefix(in, "branches/"),
		in == "worktrees" || strings.HasPrefix(in, "worktrees/"), // host paths
		in == "credentials",
		strings.HasSuffix(in, ".lock"):
		return gitSkip
	}
	return gitCopy
}

// SanitizedGitConfig returns a fresh .git/config for the sandbox's copy of a repository whose
// host config is hostConfig. It keeps only what git needs to read the repository: the format
// version and, for a SHA-256 repository, the object format. Nothing else of hostConfig survives:
// no remote (and so no URL that could embed a token), credential helper, http.extraheader,
// url.insteadOf, include, hook path, fsmonitor or filter.
func SanitizedGitConfig(hostConfig []byte) []byte {
	version, objectFormat := "0", ""
	section := ""
	for _, raw := range bytes.Split(hostConfig, []byte("\n")) {
		line := strings.TrimSpace(string(raw))
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				section = ""
				continue
			}
			section = strings.ToLower(strings.TrimSpace(line[1:end]))
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		key, val, _ := strings.Cut(line, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		val = strings.ToLower(strings.TrimSpace(val))
		switch {
		case section == "core" && key == "repositoryformatversion" && (val == "0" || val == "1"):
			version = val
		case section == "extensions" && key == "objectformat" && (val == "sha1" || val == "sha256"):
			objectFormat = val
		}
	}
	var b strings.Builder
	b.WriteString("[core]\n\trepositoryformatversion = ")
	if objectFormat == "sha256" {
		version = "1" // required by the extension
	}
	b.WriteString(version)
	b.WriteString("\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = false\n")
	if objectFormat != "" && version == "1" {
		b.WriteString("[extensions]\n\tobjectformat = " + objectFormat + "\n")
	}
	return []byte(b.String())
}
