package auth

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/migrations/dbtest"
)

func TestParseConfig(t *testing.T) {
	t.Parallel()
	key := strings.Repeat("s", MinSessionKeyLength)
	tests := []struct {
		name string
		env  map[string]string
		err  string // "" means valid
	}{
		{"Nothing", map[string]string{EnvPublicURL: "https://f.example"}, "run pages need sign-in"},
		{"OAuth", map[string]string{EnvPublicURL: "https://f.example", EnvClientID: "Iv1.x", EnvClientSecret: "s"}, ""},
		{"OAuthGHES", map[string]string{EnvPublicURL: "https://f.example", EnvClientID: "Iv1.x", EnvClientSecret: "s", "GITHUB_URL": "https://ghe.example.com"}, ""},
		{"OAuthNoSecret", map[string]string{EnvPublicURL: "https://f.example", EnvClientID: "Iv1.x"}, EnvClientSecret},
		{"Both", map[string]string{EnvPublicURL: "https://f.example", EnvClientID: "a", EnvClientSecret: "b", EnvWebToken: testToken}, "set one"},
		{"Token", map[string]string{EnvPublicURL: "http://127.0.0.1:8080", EnvWebToken: testToken, EnvSessionKey: key}, ""},
		{"ShortToken", map[string]string{EnvPublicURL: "https://f.example", EnvWebToken: "short"}, "at least 16"},
		{"ShortKey", map[string]string{EnvPublicURL: "https://f.example", EnvWebToken: testToken, EnvSessionKey: "short"}, "at least 32"},
		{"NoPublicURL", map[string]string{EnvWebToken: testToken}, EnvPublicURL + " must be set"},
		{"PublicURLPath", map[string]string{EnvPublicURL: "https://f.example/frognano", EnvWebToken: testToken}, "no path"},
		{"PublicURLScheme", map[string]string{EnvPublicURL: "ftp://f.example", EnvWebToken: testToken}, "http or https"},
		{"PublicURLRelative", map[string]string{EnvPublicURL: "f.example", EnvWebToken: testToken}, "http or https"},
		{"GitHubURLHTTP", map[string]string{EnvPublicURL: "https://f.example", EnvClientID: "a", EnvClientSecret: "b", "GITHUB_URL": "http://ghe.example.com"}, "https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseConfig(func(k string) string { return tt.env[k] })
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("error %v, want one containing %q", err, tt.err)
			}
			if err != nil && tt.env[EnvWebToken] != "" && strings.Contains(err.Error(), tt.env[EnvWebToken]) {
				t.Errorf("the error shows the token")
			}
		})
	}
	if _, err := ParseConfig(func(k string) string { return map[string]string{EnvPublicURL: "https://f.example"}[k] }); !errors.Is(err, ErrNotConfigured) {
		t.Errorf("nothing configured: %v, want ErrNotConfigured", err)
	}
}

func TestGitHubEndpoints(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ url, web, api string }{
		{"", "https://github.com", "https://api.github.com/"},
		{"https://github.com", "https://github.com", "https://api.github.com/"},
		{"https://ghe.example.com", "https://ghe.example.com", "https://ghe.example.com/api/v3/"},
		{"https://ghe.example.com/", "https://ghe.example.com", "https://ghe.example.com/api/v3/"},
	} {
		web, api, err := Config{GitHubURL: tt.url}.githubEndpoints()
		if err != nil || web != tt.web || api != tt.api {
			t.Errorf("%q: web %q api %q err %v, want %q %q", tt.url, web, api, err, tt.web, tt.api)
		}
	}
}

func TestRandomSessionKeyIsLogged(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	_, err := New(Config{PublicURL: "https://f.example", Token: testToken, Logger: slog.New(slog.NewTextHandler(&buf, nil)), Pool: dbtest.NewEmpty(t)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "end when frognano restarts") {
		t.Errorf("no log line about the random key: %s", buf.String())
	}
}

func TestSessionCookieCannotBeForged(t *testing.T) {
	t.Parallel()
	now := time.Now()
	cfg := Config{PublicURL: "http://127.0.0.1", SessionKey: strings.Repeat("a", 32), Now: func() time.Time { return now }}
	j, err := newJar(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	if err := j.set(w, sessionCookie, session{Mode: "oauth", Login: "alice", Token: "ghu_secret"}, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	good := w.Result().Cookies()[0]
	read := func(j *jar, name, value string) error {
		r := httptest.NewRequest("GET", "/", nil)
		r.AddCookie(&http.Cookie{Name: name, Value: value})
		var s session
		return j.get(r, sessionCookie, &s)
	}
	if err := read(j, good.Name, good.Value); err != nil {
		t.Fatalf("own cookie: %v", err)
	}
	if strings.Contains(good.Value, "ghu_secret") || strings.Contains(good.Value, "alice") {
		t.Errorf("the cookie is readable: %s", good.Value)
	}
	flipped := []byte(good.Value)
	flipped[len(flipped)/2] ^= 1
	other, _ := newJar(Config{PublicURL: "http://127.0.0.1", SessionKey: strings.Repeat("b", 32), Now: cfg.Now})
	for name, err := range map[string]error{
		"Tampered":   read(j, good.Name, string(flipped)),
		"OtherKey":   read(other, good.Name, good.Value),
		"Empty":      read(j, good.Name, ""),
		"Garbage":    read(j, good.Name, "!!!"),
		"TooLong":    read(j, good.Name, strings.Repeat("A", maxCookieValue+1)),
		"OtherName":  readAs(j, stateCookie, good.Value),
		"Truncated":  read(j, good.Name, good.Value[:10]),
		"NoCookie":   read(j, "something_else", good.Value),
		"WrongShape": read(j, good.Name, fmt.Sprint(good.Value, "x")),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	now = now.Add(time.Hour)
	if err := read(j, good.Name, good.Value); err == nil {
		t.Errorf("expired cookie accepted")
	}
}

// readAs opens value as cookie name: a value sealed for the session must not open as another.
func readAs(j *jar, name, value string) error {
	r := httptest.NewRequest("GET", "/", nil)
	r.AddCookie(&http.Cookie{Name: name, Value: value})
	var st oauthState
	return j.get(r, name, &st)
}

func TestViewerNeverPrintsItsToken(t *testing.T) {
	t.Parallel()
	v := Viewer{Login: "alice", Token: "ghu_0123456789abcdefghijklmnopqrstuvwxyz"}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "viewer", v)
	for _, s := range []string{fmt.Sprint(v), fmt.Sprintf("%v %+v %#v %s", v, v, v, v), buf.String()} {
		if strings.Contains(s, v.Token) || !strings.Contains(s, "alice") {
			t.Errorf("printed %q", s)
		}
	}
}
