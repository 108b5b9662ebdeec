package runner

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/frognano/frognano/runner/leaf"
)

// ModelServer is one model server the operator names (issue 30, "models by name"): the
// default one of FROGNANO_MODEL_URL and FROGNANO_MODEL, and those of FROGNANO_MODELS_FILE.
type ModelServer struct {
	// Name is the operator's name for it, which the mention, the API and the PR body use.
	Name string
	// BaseURL, Model and APIKey are its OpenAI-compatible base URL, its served model name and
	// its bearer token (a secret, "" for none).
	BaseURL, Model, APIKey string
	// Repositories are the OWNER/NAME globs (path.Match, case-insensitive) of the repositories
	// that may use it; none: every repository.
	Repositories []string
	// Limiter bounds its requests in flight for the whole process (its concurrency); nil:
	// no bound.
	Limiter *leaf.Limiter
}

// Allows reports whether repo (OWNER/NAME) may use the model.
func (m *ModelServer) Allows(repo string) bool {
	if len(m.Repositories) == 0 {
		return true
	}
	repo = strings.ToLower(repo)
	for _, g := range m.Repositories {
		if ok, _ := path.Match(strings.ToLower(g), repo); ok {
			return true
		}
	}
	return false
}

// Leaf is base (the runner's loop settings) with the model server's own.
func (m *ModelServer) Leaf(base leaf.Config) leaf.Config {
	base.BaseURL, base.Model, base.APIKey = m.BaseURL, m.Model, m.APIKey
	return base
}

// Models is every model server the operator names, and which one a run uses unless it asks.
type Models struct {
	// Servers are the named servers, the default one first.
	Servers []ModelServer
	// Default names the server a run that asks for none uses.
	Default string
	// EscalateTo, when set, names the server that tries next when no attempt of the first
	// model passes the tests (FROGNANO_ESCALATE_TO); "": no escalation.
	EscalateTo string
}

// Get is the server named name.
func (m *Models) Get(name string) (*ModelServer, bool) {
	if m == nil {
		return nil, false
	}
	for i := range m.Servers {
		if m.Servers[i].Name == name {
			return &m.Servers[i], true
		}
	}
	return nil, false
}

// withDefault is a copy of m whose default server has lc's URL, served model and key.
func (m *Models) withDefault(lc leaf.Config) *Models {
	if m == nil {
		return nil
	}
	cp := *m
	cp.Servers = slices.Clone(m.Servers)
	for i := range cp.Servers {
		if s := &cp.Servers[i]; s.Name == cp.Default {
			s.BaseURL, s.Model, s.APIKey = lc.BaseURL, lc.Model, lc.APIKey
		}
	}
	return &cp
}

// Allowed is the names repo (OWNER/NAME) may use, in the operator's order.
func (m *Models) Allowed(repo string) []string {
	if m == nil {
		return nil
	}
	var names []string
	for i := range m.Servers {
		if m.Servers[i].Allows(repo) {
			names = append(names, m.Servers[i].Name)
		}
	}
	return names
}

// Choose is the server a run of repo (OWNER/NAME) that asked for asked ("": the default)
// uses, or a *ModelRefused that says why none.
func (m *Models) Choose(repo, asked string) (*ModelServer, error) {
	name := asked
	if name == "" {
		name = m.Default
	}
	s, ok := m.Get(name)
	if !ok || !s.Allows(repo) {
		return nil, &ModelRefused{Name: name, Repo: repo, Asked: asked != "", Allowed: m.Allowed(repo)}
	}
	return s, nil
}

// Escalation is the server that tries next for repo when the model first (by name) found no
// passing attempt: nil when escalation is off, is first itself, or repo may not use it.
func (m *Models) Escalation(repo, first string) *ModelServer {
	if m == nil || m.EscalateTo == "" || m.EscalateTo == first {
		return nil
	}
	s, ok := m.Get(m.EscalateTo)
	if !ok || !s.Allows(repo) {
		return nil
	}
	return s
}

// Check refuses a set of servers that cannot work: no server, a name twice, a default or an
// escalation that names none of them.
func (m *Models) Check() error {
	if len(m.Servers) == 0 {
		return fmt.Errorf("no model server is named")
	}
	var seen []string
	for _, s := range m.Servers {
		if slices.Contains(seen, s.Name) {
			return fmt.Errorf("model %q is named twice", s.Name)
		}
		seen = append(seen, s.Name)
	}
	if _, ok := m.Get(m.Default); !ok {
		return fmt.Errorf("the default model %q is not among the named ones (%s)", m.Default, strings.Join(seen, ", "))
	}
	if m.EscalateTo != "" {
		if _, ok := m.Get(m.EscalateTo); !ok {
			return fmt.Errorf("the escalation model %q is not among the named ones (%s)", m.EscalateTo, strings.Join(seen, ", "))
		}
	}
	return nil
}

// ModelRefused says that a run may not use the model it asked for (or the default), and
// which it may use.
type ModelRefused struct {
	Name    string   // the model asked for, or the default's name
	Repo    string   // OWNER/NAME
	Asked   bool     // the run asked for Name; false: Name is the default
	Allowed []string // the names the repository may use
}

func (e *ModelRefused) Error() string {
	allowed := "none"
	if len(e.Allowed) > 0 {
		allowed = strings.Join(e.Allowed, ", ")
	}
	return fmt.Sprintf("model %q is not offered to %s (allowed: %s)", e.Name, e.Repo, allowed)
}

// Models is the operator's named model servers (Config.Models); nil for a local run.
func (r *Runner) Models() *Models { return r.cfg.Models }

// modelName is the operator's name of the spec's model server, "" for none.
func (s Spec) modelName() string {
	if s.Model == nil {
		return ""
	}
	return s.Model.Name
}

// RunModel runs spec with spec.Model (the runner's own attempt settings, as RunAll) and, when
// no attempt passes the tests and models names an escalation that spec.Repo may use, runs it
// again with that model: its Result then says which model it escalated from. The first
// model's result stands when the second could not run or did no better than nothing.
func (r *Runner) RunModel(ctx context.Context, spec Spec, models *Models, onStep func(k int, s leaf.Step)) (*Result, error) {
	res, err := r.RunAll(ctx, spec, onStep)
	if err != nil || res.Cancelled || res.PassesTests() || spec.Model == nil {
		return res, err
	}
	next := models.Escalation(spec.Repo, spec.Model.Name)
	if next == nil {
		return res, nil
	}
	r.log.Info("no attempt passed the tests; escalating", "from", spec.Model.Name, "to", next.Name)
	second := spec
	second.Model = next
	second.RunID = spec.RunID + "-e"
	res2, err := r.RunAll(ctx, second, onStep)
	if err != nil || res2.Cancelled {
		res.Notes = append(res.Notes, fmt.Sprintf("No attempt of model %s passed the tests; model %s was to try next but could not run: %v",
			spec.Model.Name, next.Name, cmp.Or(err, context.Cause(ctx))))
		return res, nil
	}
	res2.EscalatedFrom, res2.Escalation = spec.Model.Name, res
	return res2, nil
}
