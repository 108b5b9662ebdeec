// Package auth decides who may see frognano's run pages. It signs people in, either with the
// GitHub App's own user-to-server OAuth flow against the configured GitHub (github.com or GHES)
// or, on small installs without OAuth, with one shared access token; it keeps the session in a
// cookie that is encrypted and authenticated (AES-256-GCM), and records sign-outs in PostgreSQL
// (the SHA-256 of the session's random id) so that a signed-out session stays refused by every
// frognano process until it would have expired; and it answers whether a person may
// read a repository, by asking GitHub with that person's own token about the repository's
// immutable id.
//
// auth never renders, logs or stores a token anywhere but inside the encrypted session cookie,
// never grants read access when GitHub cannot be asked, never takes a session it cannot check
// against the sign-outs, and never redirects a browser to
// another site after sign-in. It does not know what a run is; package web uses it through the
// Authenticator interface.
package auth

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"

	"github.com/go-chi/chi/v5"
)

// Authenticator is what the run pages need: who is signed in, what they may read, and the
// sign-in routes. OAuth and the shared token's sign-in implement it.
type Authenticator interface {
	// Viewer returns the signed-in person; ok is false without a valid, unexpired session.
	Viewer(r *http.Request) (v Viewer, ok bool)
	// CanRead reports whether v may read the repository whose GitHub id is repoID. Access is
	// decided on the id, never on a name: a name is freed when a repository or its owner is
	// renamed, or the repository deleted, and whoever takes it gets a repository with another
	// id. An error means it could not be decided (the caller refuses access); ErrSignedOut
	// means v's GitHub token no longer works.
	CanRead(ctx context.Context, v Viewer, repoID int64) (bool, error)
	// FindRepo returns the id of the repository now named owner/repo, with ok true, when v may
	// read it; ok false when v may not or there is none. A name means only the repository it
	// names now, so runs stored under that name are not for that reason that repository's. id
	// is 0 with ok true when v may read every repository and the Authenticator knows no ids
	// (the shared token). Errors are CanRead's.
	FindRepo(ctx context.Context, v Viewer, owner, repo string) (id int64, ok bool, err error)
	// Routes mounts GET /login, GET /oauth/callback (OAuth), GET and POST /logout, and POST
	// /login (shared token).
	Routes(r chi.Router)
}

// Viewer is a signed-in person. Token is their GitHub user token (empty with a shared access
// token): never render it, never log it. String and LogValue show only the login.
type Viewer struct {
	Login string
	Token string
}

// String is the login, so that printing a Viewer never prints its token.
func (v Viewer) String() string { return v.Login }

// GoString keeps %#v from printing the token.
func (v Viewer) GoString() string { return "auth.Viewer{Login: " + strconv.Quote(v.Login) + "}" }

// LogValue keeps slog from printing the token.
func (v Viewer) LogValue() slog.Value { return slog.StringValue(v.Login) }

// SharedTokenLogin is the Login of whoever signed in with the shared access token. It holds a
// space, so no GitHub login can be mistaken for it.
const SharedTokenLogin = "access token"

// ErrSignedOut is CanRead's error when the person's GitHub token was revoked or has expired:
// the session has ended (Viewer reports it signed out from then on) and they must sign in again.
var ErrSignedOut = errors.New("the GitHub sign-in has expired or was revoked; sign in again")

// ErrNotConfigured is New's error when neither OAuth nor a shared token is configured: the run
// pages must not be served at all then, since nothing of a run is public.
var ErrNotConfigured = errors.New("run pages need sign-in: set " + EnvClientID + " and " + EnvClientSecret +
	" (sign-in with GitHub) or " + EnvWebToken + " (a shared access token)")

// LoginPath returns the sign-in address that comes back to next (a local path) afterwards.
func LoginPath(next string) string {
	return "/login?next=" + url.QueryEscape(next)
}
