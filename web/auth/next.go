package auth

import (
	"errors"
	"net/url"
	"strings"
)

// DefaultNext is where sign-in leads when no page asked for it.
const DefaultNext = "/runs"

// maxNextLength bounds the next parameter (it travels in a cookie during OAuth).
const maxNextLength = 1024

// SafeNext checks the page to return to after sign-in, which comes from the address bar and so
// from anyone: it must be a path on this site. Empty means DefaultNext. It refuses anything a
// browser could read as another site: an absolute URL, a scheme ("javascript:"), a
// scheme-relative "//host", a backslash (browsers read "/\host" as "//host"), and control
// characters (browsers drop tabs and newlines, so "/\t/host" would become "//host").
func SafeNext(next string) (string, error) {
	if next == "" {
		return DefaultNext, nil
	}
	if len(next) > maxNextLength {
		return "", errors.New("the page to return to is too long")
	}
	for _, c := range next {
		if c < 0x20 || c == 0x7f || c == '\\' {
			return "", errors.New("the page to return to must be a path on this site")
		}
	}
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		return "", errors.New("the page to return to must be a path on this site")
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") {
		return "", errors.New("the page to return to must be a path on this site")
	}
	return next, nil
}
