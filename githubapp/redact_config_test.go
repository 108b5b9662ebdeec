package githubapp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/internal/secretform"
	"github.com/frognano/frognano/internal/secrettest"
)

func TestSettingSecrets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		entries []string
		want    []string
		err     string // a part of the error; "" for none
	}{
		{"LongValue", []string{"MIRROR_TOKEN=s3cr3t-canary-value-1234"}, []string{"s3cr3t-canary-value-1234"}, ""},
		{"ShortValuesAreSettings", []string{"PIP_NO_CACHE_DIR=1", "CI=true", "PORT=3128"}, nil, ""},
		{"ProxyWithPassword", []string{"HTTPS_PROXY=http://user:proxy-pass-5678@proxy:3128"},
			[]string{"http://user:proxy-pass-5678@proxy:3128", "proxy-pass-5678"}, ""},
		{"PasswordAsTheURLSpellsIt", []string{"HTTPS_PROXY=http://user:p%40ss-w%3Ard@proxy:3128/"},
			[]string{"http://user:p%40ss-w%3Ard@proxy:3128/", "p@ss-w:rd", "p%40ss-w%3Ard"}, ""},
		{"URLWithoutPassword", []string{"PIP_INDEX_URL=http://mirror.internal/simple/"}, []string{"http://mirror.internal/simple/"}, ""},
		{"ShortPasswordIsRefused", []string{"NO_PROXY=localhost,127.0.0.1", "HTTPS_PROXY=http://user:hunter2@proxy:3128"}, nil,
			"the password in HTTPS_PROXY's URL is shorter than 8 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := SettingSecrets(tt.entries)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("err = %v, want one that says %q and never shows the password", err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("SettingSecrets(%q) = %q, %v; want %q", tt.entries, got, err, tt.want)
			}
		})
	}
}

// TestConfigSecretsInEveryForm: a configuration secret is replaced as written and as JSON
// spells it (a trajectory, a tool call's arguments), HoldsSecret finds each form, and a secret
// that holds another (a URL and its password) goes whole.
func TestConfigSecretsInEveryForm(t *testing.T) {
	t.Parallel()
	const odd = `cfg-<odd>&"quoted"\back`
	RegisterConfigSecret(odd)
	RegisterConfigSecret("http://user:cfg-pass-4242@proxy:3128")
	RegisterConfigSecret("cfg-pass-4242")
	args, _ := json.Marshal(map[string]string{"command": "echo " + odd}) // Go escapes <, > and &
	var plain bytes.Buffer                                               // other encoders do not
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]string{"command": "echo " + odd}); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{odd, string(args), plain.String()} {
		if out := Redact(text); strings.Contains(out, "odd") || !strings.Contains(out, Redacted) {
			t.Errorf("Redact(%q) = %q", text, out)
		}
		if !HoldsSecret(text) {
			t.Errorf("HoldsSecret(%q) = false", text)
		}
	}
	if got := Redact("proxy http://user:cfg-pass-4242@proxy:3128 and cfg-pass-4242"); got != "proxy "+Redacted+" and "+Redacted {
		t.Errorf("got %q", got)
	}
	if HoldsSecret("nothing of the configuration") {
		t.Error("HoldsSecret found a secret in plain text")
	}
}

func TestRedactJSON(t *testing.T) {
	t.Parallel()
	RegisterConfigSecret("json-secret-31337")
	in := `{"z":1.50,"a":[true,null,"json-secret-31337",{"k\u006Aey":"\u006Ason-secret-31337 tail"}],` +
		`"json-secret-31337":{},"arguments":"{\"command\":\"echo json-secret-31337\"}","e":[]}`
	got, err := RedactJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"z":1.50,"a":[true,null,"[REDACTED]",{"kjey":"[REDACTED] tail"}],"[REDACTED]":{},` +
		`"arguments":"{\"command\":\"echo [REDACTED]\"}","e":[]}`
	if string(got) != want {
		t.Errorf("RedactJSON =\n%s\nwant\n%s", got, want)
	}
	if _, err := RedactJSON([]byte(`{"a":`)); err == nil {
		t.Error("a broken document was accepted")
	}
}

type leakyStringer struct{}

func (leakyStringer) String() string { return "stringer log-secret-2718" }

func TestRedactLogs(t *testing.T) {
	t.Parallel()
	const secret = "log-secret-2718"
	RegisterConfigSecret(secret)
	var buf bytes.Buffer
	log := slog.New(RedactLogs(slog.NewJSONHandler(&buf, nil))).With("setup", "with "+secret)
	log.WithGroup("g").Info("message "+secret,
		"string", secret, "error", errors.New("git said "+secret), "stringer", leakyStringer{},
		slog.Group("group", "inner", secret), "map", map[string]string{"k": secret}, "count", 3)
	out := buf.String()
	if strings.Contains(out, secret) || strings.Count(out, Redacted) != 7 || !strings.Contains(out, `"count":3`) {
		t.Errorf("log line: %s", out)
	}
}

type leakyValuer struct{}

func (leakyValuer) LogValue() slog.Value {
	return slog.GroupValue(slog.String("inner", "valuer log-secret-3141"), slog.Int("n", 1))
}

// TestRedactLogsEverywhere: a secret anywhere in a record (the message, an attribute, an
// error value wrapped or in a group nested in a group, a byte slice, a LogValuer, an attribute
// added by With under a group) never reaches the output through the service's handler (JSON,
// as serve's) nor the text handler, and the line keeps its shape: only the secret goes.
func TestRedactLogsEverywhere(t *testing.T) {
	t.Parallel()
	const secret = "log-secret-3141"
	RegisterConfigSecret(secret)
	token := "ghs_" + strings.Repeat("Q", 36) // never registered: its pattern is enough
	for name, handler := range map[string]func(*bytes.Buffer) slog.Handler{
		"JSON": func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
		"Text": func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			log := slog.New(RedactLogs(handler(&buf)))
			wrapped := fmt.Errorf("pushing: %w", errors.New("git said https://x-access-token:"+token+"@ghe.example/o/r.git"))
			log.WithGroup("run").With("early", secret).Warn("message "+secret+" and "+token,
				"error", wrapped, "bytes", []byte("stdout "+secret), "valuer", leakyValuer{},
				slog.Group("outer", slog.Group("inner", slog.Any("error", errors.New("deep "+secret)), "token", token)),
				"count", 3)
			out := buf.String()
			if strings.Contains(out, secret) || strings.Contains(out, token) {
				t.Fatalf("a secret reached the log: %s", out)
			}
			for _, want := range []string{"message " + Redacted, "pushing: git said https://" + Redacted + "@ghe.example", "stdout " + Redacted, "deep " + Redacted, "count"} {
				if !strings.Contains(out, want) {
					t.Errorf("log line lacks %q: %s", want, out)
				}
			}
		})
	}
}

// TestAppLogsThroughTheRedactor: githubapp wraps whatever logger it is given (a plain one in
// tests and doctor), so its log calls never redact by hand; a logger that already redacts is
// not wrapped twice.
func TestAppLogsThroughTheRedactor(t *testing.T) {
	t.Parallel()
	const secret = "log-secret-1414"
	RegisterConfigSecret(secret)
	var buf bytes.Buffer
	plain := slog.New(slog.NewTextHandler(&buf, nil))
	cfg := Config{Logger: plain}.withDefaults()
	cfg.Logger.With("repo", "o/r").Warn("reporting the check run", "error", errors.New("GitHub said "+secret))
	if out := buf.String(); strings.Contains(out, secret) || !strings.Contains(out, "GitHub said "+Redacted) {
		t.Errorf("log line: %s", out)
	}
	again := Config{Logger: cfg.Logger}.withDefaults()
	if h, ok := again.Logger.Handler().(redactingHandler); !ok {
		t.Errorf("handler %T, want a redactingHandler", again.Logger.Handler())
	} else if _, twice := h.h.(redactingHandler); twice {
		t.Errorf("a redacting logger was wrapped twice")
	}
}

// TestPublishRefusesAPatchHoldingASecret: a patch whose file holds a configuration secret (the
// model wrote what setup left in the image into the repository) is never pushed: Publish
// refuses it for good, asks GitHub for nothing, and its error does not show the value.
func TestPublishRefusesAPatchHoldingASecret(t *testing.T) {
	t.Parallel()
	const secret = "publish-secret-1618"
	RegisterConfigSecret(secret)
	b, in := cloned(t)
	in.Patch = []byte(strings.Replace(fixPatch, "return a + b }", "return a + b } // "+secret, 1))
	_, err := b.client.Publish(context.Background(), in)
	if !errors.Is(err, ErrPatchHoldsSecret) || fault.IsTransient(err) || strings.Contains(err.Error(), secret) {
		t.Fatalf("Publish err = %v, want a permanent ErrPatchHoldsSecret without the value", err)
	}
	if br := b.gh.Branch(b.repo, in.Branch); br != nil || len(b.gh.PRs(b.repo)) != 0 {
		t.Errorf("the patch was published: branch %v, %d PRs", br, len(b.gh.PRs(b.repo)))
	}
}

// TestPublishRefusesASecretInAnyForm: Publish reads every file it would publish, whole, as
// bytes. A configuration secret written into a file with a NUL byte (git carries it as a
// compressed base85 literal, where a search of the patch's text cannot see it) or
// base64-encoded in a text file is refused for good, nothing is written to GitHub, and the
// error names the file and the form, never the value. Both were published before (the check
// searched the patch's text).
func TestPublishRefusesASecretInAnyForm(t *testing.T) {
	t.Parallel()
	secret := "publish-" + secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyz0123456789", 20)
	RegisterConfigSecret(secret)
	tests := []struct {
		name, file string
		data       []byte
		form       string
	}{
		{"NULByte", "assets/blob.bin", []byte("MIRROR_TOKEN=" + secret + "\x00"), secretform.AsIs},
		{"Base64", "docs/notes.txt", []byte(base64.StdEncoding.EncodeToString([]byte("mirror "+secret)) + "\n"), secretform.Base64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, in := cloned(t)
			in.Patch, _ = patchFrom(t, in.Dir, in.BaseSHA, func(work string) {
				write(t, filepath.Join(work, filepath.FromSlash(tt.file)), tt.data, 0o644)
			})
			if bytes.Contains(in.Patch, []byte(secret)) {
				t.Fatal("precondition: the patch's text holds the value, so a search of the text would find it")
			}
			_, err := b.client.Publish(context.Background(), in)
			if !errors.Is(err, ErrPatchHoldsSecret) || fault.IsTransient(err) || strings.Contains(err.Error(), secret) {
				t.Fatalf("Publish err = %v, want a permanent ErrPatchHoldsSecret without the value", err)
			}
			if !strings.Contains(err.Error(), strconv.Quote(tt.file)) || !strings.Contains(err.Error(), tt.form) {
				t.Errorf("Publish err = %v, want it to name %s and %q", err, tt.file, tt.form)
			}
			for _, r := range b.gh.Requests() { // the clone's token and fetch aside
				if r.Method != "GET" && strings.Contains(r.Path, "/repos/") {
					t.Errorf("Publish wrote to GitHub: %s %s", r.Method, r.Path)
				}
			}
		})
	}
}
