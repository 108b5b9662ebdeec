package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/frognano/frognano/internal/logging"
)

// Cookie names. Over https the session cookie carries the __Host- prefix, which browsers accept
// only from a secure origin, for the whole host (Path=/, no Domain): no sibling subdomain can
// set or shadow it.
const (
	sessionCookie = "frognano_session"
	stateCookie   = "frognano_oauth_state"
	csrfCookie    = "frognano_csrf"
)

// maxCookieValue bounds what open decodes; real cookies are far smaller.
const maxCookieValue = 4096

// jar seals values into cookies with AES-256-GCM: the browser can neither read nor change
// them, and a value sealed for one cookie name does not open under another.
type jar struct {
	aead   cipher.AEAD
	secure bool // Secure cookies: the public URL is https
	prefix string
	now    func() time.Time
	// cross refuses cross-origin browser POSTs (Sec-Fetch-Site, else Origin against Host);
	// the public URL's origin is trusted too, for proxies that rewrite Host.
	cross *http.CrossOriginProtection
	// ended is the record of sessions signed out, in the database, so that a copy of the
	// cookie taken before the sign-out signs nobody in, in any frognano process, until the
	// session would have expired.
	ended signOuts
	log   *slog.Logger
}

func newJar(cfg Config) (*jar, error) {
	secret := []byte(cfg.SessionKey)
	if len(secret) == 0 {
		secret = make([]byte, 32)
		_, _ = rand.Read(secret) // crypto/rand does not fail on Linux
		cfg.Logger.Warn("no " + EnvSessionKey + " set: run-page sessions use a random key and end when frognano restarts (and are not shared by several frognano processes)")
	}
	key, err := hkdf.Key(sha256.New, secret, nil, "frognano web session v1", 32)
	if err != nil {
		return nil, fmt.Errorf("deriving the session key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("creating the session cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("creating the session cipher: %w", err)
	}
	pub, err := parsePublicURL(cfg.PublicURL)
	if err != nil {
		return nil, err
	}
	cross := http.NewCrossOriginProtection()
	if err := cross.AddTrustedOrigin(pub.Scheme + "://" + pub.Host); err != nil {
		return nil, fmt.Errorf("%s: %w", EnvPublicURL, err)
	}
	j := &jar{aead: aead, secure: pub.Scheme == "https", now: cfg.Now, cross: cross,
		ended: signOuts{pool: cfg.Pool}, log: cfg.Logger}
	if j.secure {
		j.prefix = "__Host-"
	}
	return j, nil
}

// envelope is what a cookie holds once opened: the value and when it stops being valid.
type envelope struct {
	Exp int64           `json:"e"`
	V   json.RawMessage `json:"v"`
}

// set seals v into cookie name until exp.
func (j *jar) set(w http.ResponseWriter, name string, v any, exp time.Time) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding cookie %s: %w", name, err)
	}
	plain, err := json.Marshal(envelope{Exp: exp.Unix(), V: raw})
	if err != nil {
		return fmt.Errorf("encoding cookie %s: %w", name, err)
	}
	nonce := make([]byte, j.aead.NonceSize())
	_, _ = rand.Read(nonce)
	sealed := j.aead.Seal(nonce, nonce, plain, []byte(name))
	http.SetCookie(w, j.cookie(name, base64.RawURLEncoding.EncodeToString(sealed), int(exp.Sub(j.now()).Seconds())))
	return nil
}

// get opens cookie name into v; an error means no valid, unexpired cookie.
func (j *jar) get(r *http.Request, name string, v any) error {
	_, err := j.open(r, name, v)
	return err
}

// open is get that also returns when the cookie stops being valid.
func (j *jar) open(r *http.Request, name string, v any) (exp time.Time, err error) {
	c, err := r.Cookie(j.prefix + name)
	if err != nil {
		return time.Time{}, err
	}
	if len(c.Value) > maxCookieValue {
		return time.Time{}, errors.New("cookie too long")
	}
	sealed, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil || len(sealed) < j.aead.NonceSize() {
		return time.Time{}, errors.New("cookie not readable")
	}
	n := j.aead.NonceSize()
	plain, err := j.aead.Open(nil, sealed[:n], sealed[n:], []byte(name))
	if err != nil {
		return time.Time{}, errors.New("cookie not authentic")
	}
	var e envelope
	if err := json.Unmarshal(plain, &e); err != nil {
		return time.Time{}, errors.New("cookie not readable")
	}
	exp = time.Unix(e.Exp, 0)
	if !j.now().Before(exp) {
		return time.Time{}, errors.New("cookie expired")
	}
	return exp, json.Unmarshal(e.V, v)
}

// clear removes cookie name from the browser.
func (j *jar) clear(w http.ResponseWriter, name string) {
	http.SetCookie(w, j.cookie(name, "", -1))
}

// cookie is HttpOnly (no script reads it), SameSite=Lax (sent on the top-level navigation back
// from GitHub, never on a cross-site POST or subresource) and Secure over https.
func (j *jar) cookie(name, value string, maxAge int) *http.Cookie {
	if maxAge == 0 {
		maxAge = -1 // an already expired value: delete rather than keep for the session
	}
	return &http.Cookie{
		Name: j.prefix + name, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: j.secure, SameSite: http.SameSiteLaxMode,
	}
}

// session is the signed-in person, inside the session cookie.
type session struct {
	ID    string `json:"i,omitempty"` // random, per sign-in: what sign-out ends
	Mode  string `json:"m"`           // "oauth" or "token"
	Login string `json:"l"`           // GitHub login, or SharedTokenLogin
	Token string `json:"t,omitempty"` // the person's GitHub user token (OAuth)
	Key   string `json:"k,omitempty"` // which shared token signed in (its fingerprint), so a new token ends old sessions
}

// randomToken returns 32 random bytes, base64url: states and CSRF tokens.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// startSession seals s, with a new ID, into the session cookie until exp.
func (j *jar) startSession(w http.ResponseWriter, s session, exp time.Time) error {
	s.ID = randomToken()
	return j.set(w, sessionCookie, s, exp)
}

// session opens the session cookie of r; ok is false without a valid, unexpired session, for
// one that was signed out, and when the record of sign-outs cannot be read (a session that
// may have been signed out is not taken on trust).
func (j *jar) session(r *http.Request) (s session, ok bool) {
	if err := j.get(r, sessionCookie, &s); err != nil || s.ID == "" {
		return session{}, false
	}
	gone, err := j.ended.ended(r.Context(), s.ID)
	if err != nil {
		j.log.ErrorContext(r.Context(), "refusing a run-page session: cannot tell whether it was signed out", logging.Err(err))
		return session{}, false
	}
	if gone {
		return session{}, false
	}
	return s, true
}

// endSession ends r's session: the browser's cookie and every copy of it, in every frognano
// process on the database, until the session would have expired. It returns the session it
// ended (zero without a valid cookie). An error means the sign-out could not be recorded: the
// session has not ended, and the browser keeps its cookie to try again.
func (j *jar) endSession(w http.ResponseWriter, r *http.Request) (session, error) {
	var s session
	// A sign-out already recorded is recorded again: harmless, and no read is needed.
	if exp, err := j.open(r, sessionCookie, &s); err == nil && s.ID != "" {
		if err := j.ended.end(r.Context(), s.ID, exp, j.now()); err != nil {
			return session{}, err
		}
	} else {
		s = session{}
	}
	j.clear(w, sessionCookie)
	return s, nil
}
