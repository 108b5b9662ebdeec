package auth

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/migrations/dbtest"
)

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
