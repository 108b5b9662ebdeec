package runner

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/verify"
)

func testModels() *Models {
	return &Models{
		Default: "default",
		Servers: []ModelServer{
			{Name: "default", BaseURL: "http://small/v1", Model: "small"},
			{Name: "large", BaseURL: "http://large/v1", Model: "large", Repositories: []string{"acme/*", "Tools/CLI"}},
			{Name: "secret", BaseURL: "http://secret/v1", Model: "s", Repositories: []string{"acme/vault"}},
		},
	}
}

// TestModelsChoose: a run gets the model it asks for or the default, and a name the operator
// does not offer its repository (or does not name at all) is refused with the names it may
// use.
func TestModelsChoose(t *testing.T) {
	t.Parallel()
	m := testModels()
	for _, tt := range []struct {
		repo, asked string
		want        string   // the chosen name; "" : refused
		allowed     []string // the refusal's
	}{
		{"acme/api", "", "default", nil},
		{"acme/api", "large", "large", nil},
		{"tools/cli", "large", "large", nil}, // globs match case-insensitively
		{"ACME/Vault", "secret", "secret", nil},
		{"other/app", "large", "", []string{"default"}},
		{"acme/api", "secret", "", []string{"default", "large"}},
		{"acme/api", "huge", "", []string{"default", "large"}},
		{"acme/api", "Large", "", []string{"default", "large"}}, // names are exact
	} {
		s, err := m.Choose(tt.repo, tt.asked)
		if tt.want != "" {
			if err != nil || s.Name != tt.want {
				t.Errorf("Choose(%s, %q) = %v, %v; want %s", tt.repo, tt.asked, s, err, tt.want)
			}
			continue
		}
		var refused *ModelRefused
		if !errors.As(err, &refused) || refused.Name != tt.asked || !refused.Asked || !slices.Equal(refused.Allowed, tt.allowed) || refused.Repo != tt.repo {
			t.Errorf("Choose(%s, %q) = %v, %+v; want a refusal allowing %v", tt.repo, tt.asked, s, err, tt.allowed)
		}
	}
	// A default the repository may not use is refused as the default, naming what it may use.
	m.Default = "secret"
	_, err := m.Choose("acme/api", "")
	var refused *ModelRefused
	if !errors.As(err, &refused) || refused.Asked || refused.Name != "secret" || !strings.Contains(err.Error(), `model "secret" is not offered to acme/api (allowed: default, large)`) {
		t.Errorf("the default refused: %v", err)
	}
	if _, err := m.Choose("nobody/x", "secret"); err == nil || !strings.Contains(err.Error(), "(allowed: default)") {
		t.Errorf("err = %v", err)
	}
}

// TestModelsEscalation: escalation is off unless named, never to the first model itself, and
// only to a model the repository may use.
func TestModelsEscalation(t *testing.T) {
	t.Parallel()
	m := testModels()
	if s := m.Escalation("acme/api", "default"); s != nil {
		t.Errorf("escalation off: got %s", s.Name)
	}
	m.EscalateTo = "large"
	if s := m.Escalation("acme/api", "default"); s == nil || s.Name != "large" {
		t.Errorf("escalation to large: got %v", s)
	}
	if s := m.Escalation("acme/api", "large"); s != nil {
		t.Errorf("escalation from large to itself: got %s", s.Name)
	}
	if s := m.Escalation("other/app", "default"); s != nil {
		t.Errorf("escalation to a model other/app may not use: got %s", s.Name)
	}
	if err := m.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
	for _, bad := range []func(*Models){
		func(m *Models) { m.Servers = nil },
		func(m *Models) { m.Servers[2].Name = "large" },
		func(m *Models) { m.Default = "none" },
		func(m *Models) { m.EscalateTo = "none" },
	} {
		m := testModels()
		m.Servers = slices.Clone(m.Servers)
		m.EscalateTo = "large"
		bad(m)
		if err := m.Check(); err == nil {
			t.Errorf("Check accepted %+v", m)
		}
	}
}

// TestModelConcurrencyPerModel: each model's requests go through its own Limiter: with one
// slot each, a request to model A in flight holds back a second to A but not one to B, and
// a run of the default model uses the process's FROGNANO_MODEL_CONCURRENCY limiter.
func TestModelConcurrencyPerModel(t *testing.T) {
	t.Parallel()
	var inA, inB atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/a/") {
			inA.Add(1)
		} else {
			inB.Add(1)
		}
		<-release
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	a := &ModelServer{Name: "a", BaseURL: srv.URL + "/a/v1", Model: "ma", APIKey: "ka", Limiter: leaf.NewLimiter(1)}
	b := &ModelServer{Name: "b", BaseURL: srv.URL + "/b/v1", Model: "mb", Limiter: leaf.NewLimiter(1)}
	r := &Runner{cfg: Config{Leaf: leaf.Config{BaseURL: "http://default/v1", Model: "d", MaxSteps: 7}}}
	process := leaf.NewLimiter(4)
	opt := AttemptOptions{ModelLimiter: process}
	var waits atomic.Int64

	la := r.attemptLeaf(Spec{Model: a}, opt, 1, &waits)
	lb := r.attemptLeaf(Spec{Model: b}, opt, 1, &waits)
	if la.BaseURL != a.BaseURL || la.Model != "ma" || la.APIKey != "ka" || la.MaxSteps != 7 || lb.Model != "mb" {
		t.Fatalf("model settings: a %s %s, b %s", la.BaseURL, la.Model, lb.Model)
	}
	var wg sync.WaitGroup
	get := func(c *http.Client, url string) {
		defer wg.Done()
		resp, err := c.Get(url)
		if err != nil {
			t.Error(err)
			return
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	wg.Add(3)
	go get(la.HTTPClient, a.BaseURL+"/models")
	go get(la.HTTPClient, a.BaseURL+"/models")
	go get(lb.HTTPClient, b.BaseURL+"/models")
	// B's request gets through while A's second waits for A's one slot.
	for inA.Load() < 1 || inB.Load() < 1 || a.Limiter.Waiting() < 1 {
		runtime.Gosched()
	}
	if n := inA.Load(); n != 1 || b.Limiter.Waiting() != 0 || process.Waiting() != 0 {
		t.Errorf("in flight at A: %d (want 1); waiting for B %d, for the process's limiter %d", n, b.Limiter.Waiting(), process.Waiting())
	}
	close(release)
	wg.Wait()
	if inA.Load() != 2 || inB.Load() != 1 {
		t.Errorf("requests served: A %d, B %d", inA.Load(), inB.Load())
	}

	// No named model: the runner's own settings and the process's limiter.
	ld := r.attemptLeaf(Spec{}, opt, 1, &waits)
	if ld.BaseURL != "http://default/v1" || ld.HTTPClient == nil {
		t.Errorf("default model settings: %s, client %v", ld.BaseURL, ld.HTTPClient)
	}
}

// TestPassesTests: escalation's test of a run: a kept patch whose tests after passed and broke
// nothing.
func TestPassesTests(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		r    *Result
		want bool
	}{
		{"fixes all", attemptResult(10, 1, 0, 0), true},
		{"still failing", attemptResult(10, 1, 0, 1), false},
		{"breaks one", attemptResult(10, 1, 1, 0), false},
		{"no patch", attemptResult(0, 0, 0, 0), false},
		{"nil", nil, false},
	} {
		if got := tt.r.PassesTests(); got != tt.want {
			t.Errorf("%s: PassesTests = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestEscalationUsage: a run that escalated used what both models' runs used.
func TestEscalationUsage(t *testing.T) {
	t.Parallel()
	first := &Result{Leaf: &leaf.Result{PromptTokens: 1000, CompletionTokens: 100, ModelTime: 3 * time.Second},
		TestsBefore: &TestRun{Outcome: verify.Outcome{Duration: 2 * time.Second}}}
	second := &Result{Leaf: &leaf.Result{PromptTokens: 500, CompletionTokens: 50, ModelTime: time.Second},
		TestsAfter: &TestRun{Outcome: verify.Outcome{Duration: time.Second}}, EscalatedFrom: "default", Escalation: first}
	u := second.Usage()
	if u.PromptTokens != 1500 || u.CompletionTokens != 150 || u.ModelTime != 4*time.Second || u.TestTime != 3*time.Second || u.Attempts != 2 {
		t.Errorf("usage = %+v", u)
	}
}

// TestNewTakesTheDefaultFromLeaf: the default model's URL, model and key are the loop's, as
// the flags of serve may have set them after the configuration was read; the caller's Models
// are left as they were.
func TestNewTakesTheDefaultFromLeaf(t *testing.T) {
	t.Parallel()
	m := testModels()
	r := New(nil, Config{Leaf: leaf.Config{BaseURL: "http://flag/v1", Model: "flagged", APIKey: "k"}, Models: m}, nil)
	d, _ := r.Models().Get("default")
	if d.BaseURL != "http://flag/v1" || d.Model != "flagged" || d.APIKey != "k" {
		t.Errorf("the runner's default model = %+v", d)
	}
	if l, _ := r.Models().Get("large"); l.BaseURL != "http://large/v1" {
		t.Errorf("a named model changed: %+v", l)
	}
	if d, _ := m.Get("default"); d.BaseURL != "http://small/v1" {
		t.Errorf("the caller's models changed: %+v", d)
	}
}
