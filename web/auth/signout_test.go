package auth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// signOut presses the sign-out button of c's browser and fails the test unless it reports
// success.
func signOut(t *testing.T, c *http.Client, base string) {
	t.Helper()
	resp, err := c.Post(base+"/logout", "", nil)
	if err != nil {
		t.Fatalf("signing out: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("signing out: %d", resp.StatusCode)
	}
}

// refusedPage asks for the private page with the cookies of r (a copy of a browser's) and
// reports whether frognano sent it to sign in rather than showing the page.
func refusedPage(t *testing.T, b *bundle, r *http.Request) bool {
	t.Helper()
	req, _ := http.NewRequest("GET", b.srv.URL+"/runs/octo/secret", nil)
	for _, c := range r.Cookies() {
		req.AddCookie(c)
	}
	c := b.browser(t, false)
	c.Jar = nil
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET the private page with a copied cookie: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusSeeOther
}

// TestSignOutOutlastsOthersSignOuts is the attack on a bounded record of sign-outs: alice's
// session cookie is copied (a shared computer, a proxy's log), she signs out, and then bob,
// who may sign in too, signs in and out again and again to push her sign-out out of the
// record. Her copy, with her GitHub token inside, must stay refused. The record used to be
// an in-memory map of Config.ReadCacheSize entries that dropped a tenth of them when full;
// the test sets that size to 100 so that bob's 2,000 sign-outs are twenty times the bound
// (about 170 rounds of dropping, each of which kept alice's entry with probability 0.89).
func TestSignOutOutlastsOthersSignOuts(t *testing.T) {
	t.Parallel()
	const bound = 100
	b := setup(t, "", func(c *Config) { c.ReadCacheSize = bound })
	alice := b.browser(t, true)
	if status, _ := b.signIn(t, alice, "alice", "/runs/octo/secret"); status != http.StatusOK {
		t.Fatalf("alice's sign-in: %d", status)
	}
	copied := reqWithCookies(t, alice, b.srv.URL)
	signOut(t, alice, b.srv.URL)
	if _, ok := b.auth.Viewer(copied); ok {
		t.Fatal("alice's copied cookie signs in right after her sign-out")
	}

	bob := b.browser(t, true)
	for i := range 20 * bound {
		if status, _ := b.signIn(t, bob, "bob", "/runs/octo/public"); status != http.StatusOK {
			t.Fatalf("bob's sign-in %d: %d", i, status)
		}
		signOut(t, bob, b.srv.URL)
	}
	if v, ok := b.auth.Viewer(copied); ok {
		t.Errorf("after %d sign-outs by bob, alice's signed-out cookie signs in as %s again", 20*bound, v)
	}
	if !refusedPage(t, b, copied) {
		t.Error("alice's signed-out cookie reads the private page again")
	}
}

// TestSignOutHoldsInAnotherProcess signs out in one frognano process and presents a copy of
// the cookie to another one built from the same configuration and database (a restart, or
// the next of several `serve` processes behind one address): it must refuse the copy, and
// still accept a session that was not signed out.
func TestSignOutHoldsInAnotherProcess(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"OAuth", "SharedToken"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			token := ""
			if mode == "SharedToken" {
				token = testToken
			}
			var cfg *Config // as setup builds it: the second process is built from the same
			b := setup(t, token, func(c *Config) { cfg = c })
			signIn := func(c *http.Client) {
				t.Helper()
				if token == "" {
					if status, _ := b.signIn(t, c, "alice", "/runs/octo/secret"); status != http.StatusOK {
						t.Fatalf("sign-in: %d", status)
					}
					return
				}
				csrf := loginForm(t, c, b.srv.URL, "/runs/octo/secret")
				if resp, body := submit(t, c, b.srv.URL, url.Values{"token": {testToken}, "csrf": {csrf}, "next": {"/runs/octo/secret"}}, nil); resp.StatusCode != http.StatusOK {
					t.Fatalf("sign-in: %d %s", resp.StatusCode, body)
				}
			}
			gone, kept := b.browser(t, true), b.browser(t, true)
			signIn(gone)
			signIn(kept)
			copied := reqWithCookies(t, gone, b.srv.URL)
			signOut(t, gone, b.srv.URL)

			second, err := New(anotherProcess(t, *cfg))
			if err != nil {
				t.Fatalf("starting the second process: %v", err)
			}
			if v, ok := second.Viewer(copied); ok {
				t.Errorf("the other process takes the signed-out cookie for %s", v)
			}
			if _, ok := second.Viewer(reqWithCookies(t, kept, b.srv.URL)); !ok {
				t.Error("the other process refuses a session that was not signed out")
			}
		})
	}
}

// anotherProcess is cfg as another frognano process has it: the same settings and database,
// through a pool of its own, and nothing of the first process's memory.
func anotherProcess(t *testing.T, cfg Config) Config {
	t.Helper()
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg.Pool.Config())
	if err != nil {
		t.Fatalf("opening the second process's pool: %v", err)
	}
	t.Cleanup(pool.Close)
	cfg.Pool = pool
	return cfg
}

// TestSignOutRecordsOnlyAHash: the record of a sign-out is the SHA-256 of the session's id and
// the session's expiry, nothing of the cookie or the token; a later sign-out deletes it once
// the session has expired (and signOutGrace has passed).
func TestSignOutRecordsOnlyAHash(t *testing.T) {
	t.Parallel()
	var cfg *Config
	b := setup(t, "", func(c *Config) { cfg = c })
	alice := b.browser(t, true)
	if status, _ := b.signIn(t, alice, "alice", "/runs/octo/secret"); status != http.StatusOK {
		t.Fatalf("sign-in: %d", status)
	}
	copied := reqWithCookies(t, alice, b.srv.URL)
	var s session
	exp, err := b.auth.(*OAuth).jar.open(copied, sessionCookie, &s)
	if err != nil {
		t.Fatal(err)
	}
	signOut(t, alice, b.srv.URL)

	rows, err := cfg.Pool.Query(context.Background(), `SELECT id_hash, expires_at FROM ended_sessions`)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		IDHash    []byte
		ExpiresAt time.Time
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	if err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256([]byte(s.ID))
	if len(got) != 1 || !bytes.Equal(got[0].IDHash, want[:]) || !got[0].ExpiresAt.Equal(exp) {
		t.Fatalf("ended_sessions = %+v, want one row: sha256 of the id %x, expiring %v", got, want, exp)
	}

	// Past the session's expiry its cookie is refused for its age, and the next sign-out
	// deletes its row.
	b.clock.Add(DefaultSessionTTL + signOutGrace + time.Minute)
	bob := b.browser(t, true)
	if status, _ := b.signIn(t, bob, "bob", "/runs/octo/public"); status != http.StatusOK {
		t.Fatalf("bob's sign-in: %d", status)
	}
	signOut(t, bob, b.srv.URL)
	var old int
	if err := cfg.Pool.QueryRow(context.Background(), `SELECT count(*) FROM ended_sessions WHERE id_hash = $1`, want[:]).Scan(&old); err != nil {
		t.Fatal(err)
	}
	if old != 0 {
		t.Error("the expired session's sign-out is still kept")
	}
}

// TestSignOutThatCannotBeRecordedFails: when the database does not take the sign-out, the
// page says the session still works, and the browser keeps its cookie to try again; while
// frognano cannot read the record, it refuses every session rather than trust one.
func TestSignOutThatCannotBeRecordedFails(t *testing.T) {
	t.Parallel()
	var cfg *Config
	b := setup(t, "", func(c *Config) { cfg = c })
	alice := b.browser(t, true)
	if status, _ := b.signIn(t, alice, "alice", "/runs/octo/secret"); status != http.StatusOK {
		t.Fatalf("sign-in: %d", status)
	}
	copied := reqWithCookies(t, alice, b.srv.URL)
	exec := func(sql string) {
		t.Helper()
		if _, err := cfg.Pool.Exec(context.Background(), sql); err != nil {
			t.Fatal(err)
		}
	}
	exec(`ALTER TABLE ended_sessions RENAME TO ended_sessions_away`)

	resp, err := alice.Post(b.srv.URL+"/logout", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "this session still works") {
		t.Errorf("sign-out without the database: %d %s", resp.StatusCode, body)
	}
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie {
			t.Errorf("the failed sign-out changed the session cookie: %+v", c)
		}
	}
	if _, ok := b.auth.Viewer(copied); ok {
		t.Error("a session is taken while the record of sign-outs cannot be read")
	}
	if !strings.Contains(b.log.String(), "recording a sign-out in ended_sessions") {
		t.Errorf("the log does not say why the sign-out failed:\n%s", b.log.String())
	}

	exec(`ALTER TABLE ended_sessions_away RENAME TO ended_sessions`)
	if _, ok := b.auth.Viewer(copied); !ok {
		t.Fatal("the session ended although its sign-out failed")
	}
	signOut(t, alice, b.srv.URL)
	if _, ok := b.auth.Viewer(copied); ok {
		t.Error("the retried sign-out did not end the session")
	}
}

func TestNewNeedsTheDatabase(t *testing.T) {
	t.Parallel()
	_, err := New(Config{PublicURL: "https://f.example", Token: testToken})
	if err == nil || !strings.Contains(err.Error(), "Config.Pool") {
		t.Errorf("New without a pool: %v, want an error naming Config.Pool", err)
	}
}

// TestSignOutRevokesTheGitHubToken: signing out also has GitHub revoke the token inside the
// session, so a copy of the cookie carries a dead token; when GitHub does not revoke it, the
// sign-out still holds and the log says so.
func TestSignOutRevokesTheGitHubToken(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	alice := b.browser(t, true)
	if status, _ := b.signIn(t, alice, "alice", "/runs/octo/secret"); status != http.StatusOK {
		t.Fatalf("sign-in: %d", status)
	}
	tokens := b.gh.UserTokens()
	if len(tokens) != 1 {
		t.Fatalf("GitHub issued %d tokens, want 1", len(tokens))
	}
	signOut(t, alice, b.srv.URL)
	if left := b.gh.UserTokens(); len(left) != 0 {
		t.Errorf("GitHub still accepts %d tokens after the sign-out", len(left))
	}
	req, _ := http.NewRequest("GET", b.gh.URL+"/api/v3/user", nil)
	req.Header.Set("Authorization", "Bearer "+tokens[0])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /user with the signed-out token: %d, want 401", resp.StatusCode)
	}

	// GitHub no longer knows the token (the person revoked the App): the sign-out holds.
	if status, _ := b.signIn(t, alice, "alice", "/runs/octo/secret"); status != http.StatusOK {
		t.Fatalf("second sign-in: %d", status)
	}
	copied := reqWithCookies(t, alice, b.srv.URL)
	b.gh.RevokeUserTokens("alice")
	signOut(t, alice, b.srv.URL)
	if _, ok := b.auth.Viewer(copied); ok {
		t.Error("the session outlived a sign-out whose token GitHub did not revoke")
	}
	if !strings.Contains(b.log.String(), "GitHub did not revoke the GitHub token") {
		t.Errorf("the log does not say the revocation failed:\n%s", b.log.String())
	}
	if strings.Contains(b.log.String(), tokens[0]) {
		t.Error("the log holds a token")
	}
}
