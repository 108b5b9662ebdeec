package githubapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Grants are what one installation has granted the App: its permissions and the webhook events
// it subscribes to. GitHub keeps an installation on the permissions it accepted until someone
// with the right approves the App's new ones, so an installation may hold less than the App asks
// for (RequiredPermissions): frognano asks each token for what the installation has and a run
// needs, and skips, with a line that says why, what needs more.
type Grants struct {
	Installation int64
	Account      string            // the installation's account: an organisation or a user
	Permissions  map[string]string // "checks": "write", ...
	Events       []string
	Suspended    bool
}

// CorePermissions are what every run needs: without one of them, no run (MissingCore).
func CorePermissions() map[string]string {
	return map[string]string{"contents": "write", "issues": "write", "pull_requests": "write", "metadata": "read"}
}

// Has reports whether the installation grants perm at level or above.
func (g Grants) Has(perm, level string) bool {
	return permissionLevels[g.Permissions[perm]] >= permissionLevels[level]
}

// MissingCore names each core permission the installation lacks ("issues: read, needs write").
func (g Grants) MissingCore() []string { return MissingPermissions(g.Permissions, CorePermissions()) }

// Subscribed reports whether the installation receives event's webhooks.
func (g Grants) Subscribed(event string) bool { return slices.Contains(g.Events, event) }

// tokenPermissions are what a token of this installation asks for: the core permissions and
// checks (write when check runs are wanted, to report them; read otherwise, for a CI
// follow-up's failed checks), each only as far as the installation grants it.
func (g Grants) tokenPermissions(checks bool) map[string]string {
	want := CorePermissions()
	want["checks"] = "read"
	if checks {
		want["checks"] = "write"
	}
	out := map[string]string{}
	for name, level := range want {
		if g.Has(name, level) {
			out[name] = level
		} else if g.Has(name, "read") {
			out[name] = "read"
		}
	}
	return out
}

// Installation reads what installation id has granted (GET /app/installations/{id}, as the
// App). A 404 means the App is no longer installed there.
func (a *App) Installation(ctx context.Context, id int64) (Grants, error) {
	gh, err := a.appClient()
	if err != nil {
		return Grants{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, a.cfg.HTTPTimeout)
	defer cancel()
	inst, _, err := gh.Apps.GetInstallation(ctx, id)
	if err != nil {
		return Grants{}, mark(fmt.Errorf("reading installation %d: %w", id, err))
	}
	g := Grants{Installation: id, Events: inst.Events, Suspended: inst.SuspendedAt != nil, Permissions: map[string]string{}}
	if acc := inst.GetAccount(); acc != nil {
		g.Account = acc.GetLogin()
	}
	if inst.Permissions != nil {
		// go-github's struct has a field per permission; its JSON is GitHub's map.
		b, err := json.Marshal(inst.Permissions)
		if err != nil {
			return Grants{}, fmt.Errorf("reading installation %d's permissions: %w", id, err)
		}
		if err := json.Unmarshal(b, &g.Permissions); err != nil {
			return Grants{}, fmt.Errorf("reading installation %d's permissions: %w", id, err)
		}
	}
	sort.Strings(g.Events)
	return g, nil
}

// MissingPermissionsError: the installation lacks a core permission (CorePermissions), so no
// run can do its work there. It is permanent: asking again gets the same answer until someone
// approves the App's permissions.
type MissingPermissionsError struct {
	Grants  Grants
	Missing []string // "pull_requests: read, needs write"
}

func (e *MissingPermissionsError) Error() string {
	return fmt.Sprintf("installation %d has not granted the App %s", e.Grants.Installation, strings.Join(e.Missing, "; "))
}

// CanComment reports whether the installation can still comment on issues, to say so there.
func (e *MissingPermissionsError) CanComment() bool { return e.Grants.Has("issues", "write") }

// errPermissionsChanged is a token request GitHub refused with 422 because the installation no
// longer grants what was asked: the grants changed between the look and the request.
var errPermissionsChanged = errors.New("the installation's permissions changed")
