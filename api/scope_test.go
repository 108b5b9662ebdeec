package api

import (
	"net/http"
	"strconv"
	"testing"
)

// TestGetDecidesByTheRepositorysIDNotItsName: a token scoped to a repository by name reads the
// runs of the repository that name is now, not those of another that had the name before. Before,
// GET compared the name a run was recorded under: once acme/widgets was renamed away (its runs
// may be private) and a new acme/widgets made, a token made for the new one read every run of the
// old one; and once acme/gadgets moved to another account, a token naming acme/gadgets still read
// its runs, which POST refuses it.
func TestGetDecidesByTheRepositorysIDNotItsName(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, widgets := f.token(t, "widgets", Scope{Repos: []string{"acme/widgets"}})
	_, gadgets := f.token(t, "gadgets", Scope{Repos: []string{"Acme/Gadgets"}})
	_, inst7 := f.token(t, "inst7", Scope{Installations: []int64{7}})
	started := func(secret, body string) string {
		t.Helper()
		status, ans := f.start(t, secret, body)
		if status != http.StatusCreated {
			t.Fatalf("start %s: %d %v", body, status, ans)
		}
		return strconv.FormatInt(int64(ans["id"].(float64)), 10)
	}
	get := func(id, secret string) int {
		t.Helper()
		status, _ := f.do(t, http.MethodGet, "/api/v1/runs/"+id, secret, nil)
		return status
	}
	oldWidgets := started(widgets, `{"repository": "acme/widgets", "issue": 3}`)
	oldGadgets := started(gadgets, `{"repository": "acme/gadgets", "issue": 4}`)
	if get(oldWidgets, widgets) != http.StatusOK || get(oldGadgets, gadgets) != http.StatusOK {
		t.Fatal("the tokens do not read their own runs")
	}

	// acme/widgets is renamed away and a new repository takes the name.
	f.gh.RenameRepo(f.gh.Repo("acme", "widgets"), "acme", "widgets-legacy")
	f.gh.AddInstallation(9, f.gh.AddRepo("acme", "widgets", map[string]string{"README": "new\n"}))
	if got := get(oldWidgets, widgets); got != http.StatusNotFound {
		t.Errorf("the old acme/widgets' run, to the new one's token: %d, want 404", got)
	}
	if got := get(oldWidgets, inst7); got != http.StatusOK {
		t.Errorf("the old acme/widgets' run, to its installation's token: %d, want 200", got)
	}
	newWidgets := started(widgets, `{"repository": "acme/widgets", "issue": 5}`)
	if got := get(newWidgets, widgets); got != http.StatusOK {
		t.Errorf("the new acme/widgets' run, to its token: %d, want 200", got)
	}

	// acme/gadgets moves to another account: the name acme/gadgets is no repository's any more.
	f.gh.TransferRepo(f.gh.Repo("acme", "gadgets"), "elsewhere", 0)
	if status, _ := f.start(t, gadgets, `{"repository": "acme/gadgets", "issue": 4}`); status == http.StatusCreated {
		t.Errorf("POST on a moved repository by its old name: %d", status)
	}
	if got := get(oldGadgets, gadgets); got != http.StatusNotFound {
		t.Errorf("a moved repository's run, to a token naming its old name: %d, want 404", got)
	}
}

// TestStartSaysNothingOfAnotherInstallationsRepository: to a token that reaches a repository
// only through an installation, a repository of another installation whose token cannot be
// made (a suspended installation) is answered 403, as one no installation has. Before, it was
// 502 ("GitHub did not say"), which told that another installation has it; a token that names
// it, or reaches its installation, still gets 502 (try again).
func TestStartSaysNothingOfAnotherInstallationsRepository(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, inst7 := f.token(t, "inst7", Scope{Installations: []int64{7}})
	_, inst9 := f.token(t, "inst9", Scope{Installations: []int64{9}})
	_, named := f.token(t, "named", Scope{Repos: []string{"other/thing"}})
	f.gh.SuspendInstallation(9, true)
	status, ans := f.start(t, inst7, `{"repository": "other/thing", "issue": 1}`)
	nothing, none := f.start(t, inst7, `{"repository": "other/nothing", "issue": 1}`)
	if status != nothing || ans["error"] != "the token's scope does not include other/thing" || status != http.StatusForbidden {
		t.Errorf("another installation's repository: %d %v; a repository of none: %d %v", status, ans, nothing, none)
	}
	for name, secret := range map[string]string{"inst9": inst9, "named": named} {
		if status, ans := f.start(t, secret, `{"repository": "other/thing", "issue": 1}`); status != http.StatusBadGateway {
			t.Errorf("%s: %d %v, want 502", name, status, ans)
		}
	}
}
