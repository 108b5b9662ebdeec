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
	"net/http"
	"time"
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
	// ended holds the IDs of sessions signed out, until they would have expired, so that a
	// copy of the cookie taken before the sign-out no longer signs anyone in. It is this
	// process's memory: with several frognano processes behind one address, a copy stays
	// valid on the others (and after a restart) until the session's expiry.
	ended *expiring[struct{}]
	ttl   time.Duration // the longest a session lasts: how long an ended ID is kept
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
		ended: newExpiring[struct{}](cfg.ReadCacheSize), ttl: cfg.SessionTTL}
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
	c, err := r.Cookie(j.prefix + name)
	if err != nil {
		return err
	}
	if len(c.Value) > maxCookieValue {
		return errors.New("cookie too long")
	}
	sealed, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil || len(sealed) < j.aead.NonceSize() {
		return errors.New("cookie not readable")
	}
	n := j.aead.NonceSize()
	plain, err := j.aead.Open(nil, sealed[:n], sealed[n:], []byte(name))
	if err != nil {
		return errors.New("cookie not authentic")
	}
	var e envelope
	if err := json.Unmarshal(plain, &e); err != nil {
		return errors.New("cookie not readable")
	}
	if !j.now().Before(time.Unix(e.Exp, 0)) {
		return errors.New("cookie expired")
	}
	return json.Unmarshal(e.V, v)
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

// session opens the session cookie of r; ok is false without a valid, unexpired session or
// for one that was signed out.
func (j *jar) session(r *http.Request) (s session, ok bool) {
	if err := j.get(r, sessionCookie, &s); err != nil || s.ID == "" {
		return session{}, false
	}
	if _, gone := j.ended.get(s.ID, j.now()); gone {
		return session{}, false
	}
	return s, true
}

// endSession ends r's session, the browser's cookie and every copy of it (in this process).
func (j *jar) endSession(w http.ResponseWriter, r *http.Request) {
	if s, ok := j.session(r); ok {
		now := j.now()
		j.ended.put(s.ID, struct{}{}, now.Add(j.ttl), now)
	}
	j.clear(w, sessionCookie)
}
