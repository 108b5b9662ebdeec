package doctor

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/frognano/frognano/githubapp"
)

// GitHub checks, as the App: that GitHub answers at the configured URL and accepts the App's
// JWT (GET /app), that the App has every permission and event the service needs, and that
// it is installed somewhere (GET /app/installations).
func GitHub(ctx context.Context, cfg githubapp.Config) []Result {
	app, err := githubapp.New(cfg)
	if err != nil {
		return []Result{fail("github", err.Error(), "check GITHUB_APP_ID, the private key and GITHUB_URL"),
			skip("github-permissions", "needs the App"), skip("github-installations", "needs the App")}
	}
	var info githubapp.AppInfo
	auth := timed(ctx, 45*time.Second, func(ctx context.Context) Result {
		info, err = app.Self(ctx)
		switch status := githubapp.HTTPStatus(err); {
		case err == nil:
			return pass("github", fmt.Sprintf("%s accepts the JWT of App %d (%s)", app.Endpoints().API, info.ID, info.Slug))
		case status == http.StatusUnauthorized:
			return fail("github", fmt.Sprintf("%s refused the App's JWT (401)", app.Endpoints().API),
				"GITHUB_APP_ID and the private key do not belong together: download a new key from the App's settings")
		case status != 0:
			return fail("github", fmt.Sprintf("GET /app answered %d: %s", status, clip(err.Error(), 200)), "check GITHUB_URL")
		default:
			return fail("github", fmt.Sprintf("GitHub at %s does not answer: %s", cfg.URL, clip(err.Error(), 200)), "check GITHUB_URL and the network path to it")
		}
	})
	if auth.Status != Pass {
		return []Result{auth, skip("github-permissions", "needs the App's JWT accepted"), skip("github-installations", "needs the App's JWT accepted")}
	}
	results := []Result{auth}
	perms := Result{Name: "github-permissions"}
	missing := githubapp.MissingPermissions(info.Permissions, githubapp.RequiredPermissions(cfg.ChecksWrite))
	events := githubapp.MissingEvents(info.Events, githubapp.RequiredEvents())
	if len(missing) > 0 || len(events) > 0 {
		var what []string
		if len(missing) > 0 {
			what = append(what, "permissions "+strings.Join(missing, ", "))
		}
		if len(events) > 0 {
			what = append(what, "events "+strings.Join(events, ", "))
		}
		perms = fail(perms.Name, "the App lacks "+strings.Join(what, "; "),
			"grant them in the App's settings (Permissions & events), then accept the new permissions on each installation")
	} else if optional := githubapp.MissingEvents(info.Events, githubapp.OptionalEvents()); len(optional) > 0 {
		perms = warn(perms.Name, "the App does not subscribe to the events "+strings.Join(optional, ", ")+outcomesFromReconciliation,
			"add them in the App's settings (Permissions & events: Pull request), then accept the change on each installation")
	} else {
		perms = pass(perms.Name, fmt.Sprintf("%s; events %s", formatPermissions(githubapp.RequiredPermissions(cfg.ChecksWrite)), strings.Join(githubapp.ManifestEvents(), ", ")))
	}
	results = append(results, perms)
	var installs []githubapp.Installation
	results = append(results, timed(ctx, 45*time.Second, func(ctx context.Context) Result {
		list, err := app.Installations(ctx)
		if err != nil {
			return fail("github-installations", clip(err.Error(), 200), "")
		}
		if len(list) == 0 {
			return fail("github-installations", "the App is installed nowhere", "install it on the repositories frognano may work on")
		}
		var names []string
		for _, in := range list {
			n := in.Account.Login
			if in.SuspendedAt != nil {
				n += " (suspended)"
			}
			names = append(names, n)
			installs = append(installs, in)
		}
		return pass("github-installations", fmt.Sprintf("%d: %s", len(list), clip(strings.Join(names, ", "), 200)))
	}))
	for _, in := range installs {
		results = append(results, installationResult(in, cfg.ChecksWrite))
	}
	return results
}

// optionalPermissions are what a run uses when an installation grants it and skips, saying
// so, when it does not (githubapp.Grants).
func optionalPermissions(checks bool) map[string]string {
	p := map[string]string{"actions": "read"}
	if checks {
		p["checks"] = "write"
	}
	return p
}

// installationResult judges what one installation granted: without a core permission no run
// can work there (a failure); without an optional permission or event, runs skip what needs
// it and say so (a warning).
func installationResult(in githubapp.Installation, checks bool) Result {
	name := "github-installation " + in.Account.Login
	approve := "an owner of " + in.Account.Login + " approves the App's requested permissions and events in the account's settings, under GitHub Apps"
	if core := githubapp.MissingPermissions(in.Permissions, githubapp.CorePermissions()); len(core) > 0 {
		return fail(name, fmt.Sprintf("installation %d lacks %s: no run can work there", in.ID, strings.Join(core, ", ")), approve)
	}
	var lacks []string
	if in.SuspendedAt != nil {
		lacks = append(lacks, "the App is suspended there (no run starts)")
	}
	if opt := githubapp.MissingPermissions(in.Permissions, optionalPermissions(checks)); len(opt) > 0 {
		lacks = append(lacks, "permissions "+strings.Join(opt, ", ")+" (runs skip check runs or CI logs and say so)")
	}
	if events := githubapp.MissingEvents(in.Events, githubapp.RequiredEvents()); len(events) > 0 {
		lacks = append(lacks, "events "+strings.Join(events, ", ")+" (those webhooks start nothing)")
	}
	if events := githubapp.MissingEvents(in.Events, githubapp.OptionalEvents()); len(events) > 0 {
		lacks = append(lacks, "events "+strings.Join(events, ", ")+outcomesFromReconciliation)
	}
	if len(lacks) > 0 {
		return warn(name, fmt.Sprintf("installation %d lacks %s", in.ID, strings.Join(lacks, "; ")), approve)
	}
	return pass(name, fmt.Sprintf("installation %d grants every permission and event frognano uses", in.ID))
}

// outcomesFromReconciliation says what a missing pull_request event costs.
const outcomesFromReconciliation = " (what became of frognano's pull requests is then found by reconciliation, every FROGNANO_OUTCOMES_INTERVAL, instead of at once)"

func formatPermissions(p map[string]string) string {
	var out []string
	for k, v := range p {
		out = append(out, k+": "+v)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
