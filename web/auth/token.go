package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/frognano/frognano/internal/logging"
)

// maxLoginForm bounds the sign-in form's body.
const maxLoginForm = 8 << 10

// csrfLifetime is how long a sign-in form stays usable.
const csrfLifetime = time.Hour

// sharedToken signs in whoever holds the configured access token; they may read every
// repository. Build it with New.
type sharedToken struct {
	cfg    Config
	jar    *jar
	log    *slog.Logger
	digest [32]byte // sha256 of the token: compared in constant time, whatever the input's length
	key    string   // the token's fingerprint kept in sessions
	failed *expiring[int]
}

var _ Authenticator = (*sharedToken)(nil)

func newSharedToken(cfg Config, j *jar) *sharedToken {
	mac := hmac.New(sha256.New, []byte(cfg.Token))
	mac.Write([]byte("frognano web session fingerprint"))
	return &sharedToken{
		cfg: cfg, jar: j, log: cfg.Logger, digest: sha256.Sum256([]byte(cfg.Token)),
		key: hex.EncodeToString(mac.Sum(nil))[:16], failed: newExpiring[int](cfg.ReadCacheSize),
	}
}

// Routes mounts GET and POST /login, and GET and POST /logout.
func (s *sharedToken) Routes(r chi.Router) {
	r.Get("/login", s.handleForm)
	r.Method(http.MethodPost, "/login", s.jar.cross.Handler(http.HandlerFunc(s.handleSubmit)))
	mountLogout(r, s.jar, nil)
}

// Viewer returns the token holder of a valid session signed in with the current token.
func (s *sharedToken) Viewer(r *http.Request) (Viewer, bool) {
	ses, ok := s.jar.session(r)
	if !ok || ses.Mode != "token" || subtle.ConstantTimeCompare([]byte(ses.Key), []byte(s.key)) != 1 {
		return Viewer{}, false
	}
	return Viewer{Login: SharedTokenLogin}, true
}

// CanRead is true for every repository id: the token holder may read everything.
func (s *sharedToken) CanRead(_ context.Context, v Viewer, repoID int64) (bool, error) {
	if v.Login != SharedTokenLogin {
		return false, ErrSignedOut
	}
	return repoID > 0, nil
}

// FindRepo is id 0 and true for every valid repository name: the token holder may read
// everything, and without a GitHub token of its own the shared token knows no ids, so the
// caller selects by the stored name (and still asks CanRead of each run's id).
func (s *sharedToken) FindRepo(_ context.Context, v Viewer, owner, repo string) (int64, bool, error) {
	if v.Login != SharedTokenLogin {
		return 0, false, ErrSignedOut
	}
	return 0, validOwner.MatchString(owner) && validRepo.MatchString(repo) && repo != "." && repo != "..", nil
}

// handleForm shows the sign-in form, with a fresh CSRF value in a cookie and in the form.
func (s *sharedToken) handleForm(w http.ResponseWriter, r *http.Request) {
	next, ok := startSignIn(w, r, s.Viewer)
	if !ok {
		return
	}
	s.form(w, r, http.StatusOK, next, "")
}

func (s *sharedToken) form(w http.ResponseWriter, _ *http.Request, status int, next, msg string) {
	csrf := randomToken()
	http.SetCookie(w, s.jar.cookie(csrfCookie, csrf, int(csrfLifetime.Seconds())))
	if msg == "" {
		msg = "Enter the access token the operator gave you."
	}
	render(w, status, page{Title: "Sign in to frognano", Message: msg, Form: true, Next: next, CSRF: csrf})
}

// handleSubmit checks the form: the CSRF value (double-submit: the form's must equal the
// cookie's, which another site can neither read nor set), the address's failures, the token.
func (s *sharedToken) handleSubmit(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxLoginForm)
	if err := r.ParseForm(); err != nil {
		errorPage(w, http.StatusBadRequest, "Cannot sign in", "The sign-in form could not be read.")
		return
	}
	next, err := SafeNext(r.PostForm.Get("next"))
	if err != nil {
		errorPage(w, http.StatusBadRequest, "Cannot sign in", err.Error()+".")
		return
	}
	c, err := r.Cookie(s.jar.prefix + csrfCookie)
	sent := r.PostForm.Get("csrf")
	if err != nil || c.Value == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(sent)) != 1 {
		s.form(w, r, http.StatusForbidden, next, "The sign-in form expired or did not come from this site. Enter the token again.")
		return
	}
	now := s.cfg.Now()
	who := clientKey(r)
	if n, _ := s.failed.get(who, now); n >= MaxFailedLogins {
		w.Header().Set("Retry-After", strconv.Itoa(int(FailedLoginWindow.Seconds())))
		errorPage(w, http.StatusTooManyRequests, "Too many attempts", "Too many wrong tokens from this address. Wait a while, then try again.")
		return
	}
	got := sha256.Sum256([]byte(r.PostForm.Get("token")))
	if subtle.ConstantTimeCompare(got[:], s.digest[:]) != 1 {
		n := s.failed.update(who, func(n int) int { return n + 1 }, now.Add(FailedLoginWindow), now)
		s.log.WarnContext(r.Context(), "a wrong run-page access token", "client", who, "failures", n)
		s.form(w, r, http.StatusUnauthorized, next, "That is not the access token.")
		return
	}
	http.SetCookie(w, s.jar.cookie(csrfCookie, "", -1))
	if err := s.jar.startSession(w, session{Mode: "token", Login: SharedTokenLogin, Key: s.key}, now.Add(s.cfg.SessionTTL)); err != nil {
		errorPage(w, http.StatusInternalServerError, "Sign-in failed", "The session could not be stored.")
		return
	}
	s.log.InfoContext(r.Context(), "signed in to the run pages with the access token", "client", who)
	redirect(w, r, next, http.StatusSeeOther)
}

// clientKey is the address failures are counted for: the connection's IP (an IPv6 address by
// its /64, which one host usually holds whole). Forwarded-for headers are not trusted: behind
// a proxy every client shares the proxy's count, which errs on the side of fewer guesses.
func clientKey(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if ip.To4() == nil {
		return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return ip.String()
}

// mountLogout mounts GET /logout (a page with a sign-out button) and POST /logout, which
// is cross-origin protected so another site cannot sign a person out. Sign-out ends the
// session itself, not only the browser's cookie (jar.endSession), and says so only once
// that is recorded; then ended, when set, is given the session that ended.
func mountLogout(r chi.Router, j *jar, ended func(context.Context, session)) {
	r.Get("/logout", func(w http.ResponseWriter, r *http.Request) {
		render(w, http.StatusOK, page{Title: "Sign out of frognano", Logout: true})
	})
	r.Method(http.MethodPost, "/logout", j.cross.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, err := j.endSession(w, r)
		if err != nil {
			j.log.ErrorContext(r.Context(), "signing out of the run pages", logging.Err(err))
			render(w, http.StatusServiceUnavailable, page{Title: "Not signed out", Logout: true,
				Message: "The sign-out could not be recorded, so this session still works. Try again in a moment."})
			return
		}
		if ended != nil && s.ID != "" {
			ended(r.Context(), s)
		}
		render(w, http.StatusOK, page{Title: "Signed out", Message: "You are signed out of frognano.", Link: "/login", LinkTxt: "Sign in"})
	})))
}
