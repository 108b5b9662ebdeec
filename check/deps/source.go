package deps

import (
	"path"
	"strings"

	"github.com/frognano/frognano/check/secrets"
)

// SourceKind says where a package comes from.
type SourceKind string

const (
	// Registry: the ecosystem's package index (for pip, the indexes its options name).
	Registry SourceKind = ""
	// FromURL: an archive downloaded from a URL.
	FromURL SourceKind = "url"
	// FromVCS: a version-control repository (git, and for pip hg, svn and bzr too).
	FromVCS SourceKind = "vcs"
	// FromPath: a directory or archive on disk, named by a path.
	FromPath SourceKind = "path"
	// FromPackage: another package of the registry installed under this name: npm's alias
	// (npm:other@1), Cargo's package = "other", a Go module replaced by another module.
	FromPackage SourceKind = "package"
	// FromRegistry: a registry other than the ecosystem's default (Cargo's registry or
	// registry-index of a dependency).
	FromRegistry SourceKind = "registry"
)

// Source is where a package comes from when that is not its ecosystem's registry.
type Source struct {
	Kind SourceKind
	// Where is the URL (any user name and password, and query values that look like
	// credentials, replaced by [REDACTED]; see RedactURL), the path as written, or the other
	// package's name.
	Where string
	// Outside: a path that leaves the repository (absolute, from the home directory, or ..
	// past its root); what it names is not in the published tree.
	Outside bool
}

// maxWhere bounds a source's text: a URL written by the patch is data, shown cut.
const maxWhere = 2000

// Describe says in words where the package comes from, with the source's text apart so that
// a renderer can quote it: ("git", "git+https://…"), ("the local path", "../x"). A package of
// the registry has ("", "").
func (s Source) Describe() (words, where string) {
	switch s.Kind {
	case FromURL:
		return "the URL", s.Where
	case FromVCS:
		return "the repository", s.Where
	case FromPath:
		if s.Outside {
			return "the path outside the repository", s.Where
		}
		return "the local path", s.Where
	case FromPackage:
		return "the package", s.Where
	case FromRegistry:
		return "the registry", s.Where
	}
	return "", ""
}

// vcsPrefixes are the prefixes pip and npm take for a version-control repository.
var vcsPrefixes = []string{"git+", "hg+", "svn+", "bzr+", "git://", "github:", "gitlab:", "bitbucket:", "gist:"}

// isVCS reports whether s names a version-control repository by its prefix.
func isVCS(s string) bool {
	l := strings.ToLower(s)
	for _, p := range vcsPrefixes {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// hasScheme reports whether s starts with a URL scheme followed by "://" or, for the
// schemes that take none, ":" (file:, github:, …).
func hasScheme(s string) bool {
	i := strings.Index(s, ":")
	if i <= 0 {
		return false
	}
	for j, r := range s[:i] {
		alpha := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !alpha && (j == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	return strings.HasPrefix(s[i:], "://") || isVCS(s) || strings.HasPrefix(strings.ToLower(s), "file:")
}

// urlSource classifies a URL written as a dependency's source in the manifest at file.
func urlSource(file, u string) Source {
	if isVCS(u) {
		return Source{Kind: FromVCS, Where: RedactURL(u)}
	}
	if strings.HasPrefix(strings.ToLower(u), "file:") {
		p := u[len("file:"):]
		if strings.HasPrefix(p, "//") {
			p = "/" // file://HOST/PATH: an absolute path
		}
		return Source{Kind: FromPath, Where: RedactURL(u), Outside: outside(file, p)}
	}
	return Source{Kind: FromURL, Where: RedactURL(u)}
}

// pathSource is a path written in the manifest at file, relative to the manifest's folder.
func pathSource(file, p string) Source {
	// A path is redacted as a URL is: a patch can write anything where a path belongs.
	return Source{Kind: FromPath, Where: RedactURL(p), Outside: outside(file, p)}
}

// outside reports whether the path p, written in the file at file (a path of the
// repository), leaves the repository: absolute, from a home directory, or .. past the root.
func outside(file, p string) bool {
	_, ok := resolve(file, p)
	return !ok
}

// resolve joins p, written in the file at file, to the file's folder: the repository path it
// names, and false when it leaves the repository (absolute, ~, or .. past its root) or names
// its root.
func resolve(file, p string) (string, bool) {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.HasPrefix(p, `\`) || strings.ContainsRune(p, 0) {
		return "", false
	}
	j := path.Clean(path.Join(path.Dir(file), p))
	if j == "." || j == ".." || strings.HasPrefix(j, "../") || strings.HasPrefix(j, "/") {
		return "", false
	}
	return j, true
}

// credentialWords are query parameter names whose values RedactURL removes: a token in a
// download URL (a signed URL, a private index's key) is a credential.
var credentialWords = []string{"token", "key", "secret", "sig", "pass", "auth", "credential", "session", "code", "x-amz-", "x-goog-"}

// RedactURL returns the URL u, as a patch wrote it, without its credentials: any user
// information (user:password@ or a bare token@) becomes [REDACTED], except ssh's plain "git"
// user; the values of query parameters whose names look like credentials (token, key,
// signature, …) become [REDACTED]; and whatever check/secrets' rules (gitleaks' default
// rules) find becomes [secret: RULE]. The result is bounded to a few KiB. Renderers redact it
// again with the publishing redactor: this is the listing's own, so that no credential of a
// URL is ever kept in a Report.
func RedactURL(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		rest := u[i+3:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndex(rest[:end], "@"); at >= 0 && rest[:at] != "git" {
			u = u[:i+3] + "[REDACTED]" + rest[at:]
		}
	}
	if q := strings.Index(u, "?"); q >= 0 {
		end := len(u)
		if h := strings.Index(u[q:], "#"); h >= 0 {
			end = q + h
		}
		params := strings.Split(u[q+1:end], "&")
		for i, p := range params {
			k, _, ok := strings.Cut(p, "=")
			if !ok {
				continue
			}
			lk := strings.ToLower(k)
			for _, w := range credentialWords {
				if strings.Contains(lk, w) {
					params[i] = k + "=[REDACTED]"
					break
				}
			}
		}
		u = u[:q+1] + strings.Join(params, "&") + u[end:]
	}
	// Cut last: a credential cut in half would no longer be found.
	return clipWhere(secrets.Redact(u))
}

// clipWhere bounds a text written by the patch that a Report keeps.
func clipWhere(s string) string {
	if len(s) <= maxWhere {
		return s
	}
	return strings.ToValidUTF8(s[:maxWhere], "") + "…"
}
