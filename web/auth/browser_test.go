package auth

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/frognano/frognano/web/webtest"
)

// navigate opens url in the browser and returns the #title it ends on, after every redirect.
func navigate(t *testing.T, _ *bundle, ctx context.Context, url string) string {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("navigating to %s: %v", url, err)
	}
	return webtest.Text(t, ctx, "#title")
}

// TestBrowserOAuthSignIn signs in through the fake GitHub in headless Chromium: alice sees the
// private repository's page; after signing out, bob signs in and is refused it.
func TestBrowserOAuthSignIn(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	ctx := webtest.Browser(t)

	b.gh.SignInAs("alice")
	if got := navigate(t, b, ctx, b.srv.URL+"/runs/octo/secret"); got != "Runs of octo/secret" {
		t.Fatalf("alice sees %q", got)
	}
	if who := webtest.Text(t, ctx, "#who"); who != "signed in as alice" {
		t.Errorf("#who = %q", who)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || loc != b.srv.URL+"/runs/octo/secret" {
		t.Errorf("ended at %q (%v), want the page asked for", loc, err)
	}
	webtest.Screenshot(t, ctx, "alice-signed-in")
	// Scripts cannot read the session cookie (HttpOnly).
	cookies, err := chromedp.Run(ctx, chromedp.Evaluate[string]("document.cookie"))
	if err != nil || strings.Contains(cookies, sessionCookie) {
		t.Errorf("document.cookie = %q (%v)", cookies, err)
	}

	// Sign out with the button, then bob signs in at GitHub and tries the same page.
	if got := navigate(t, b, ctx, b.srv.URL+"/logout"); got != "Sign out of frognano" {
		t.Fatalf("logout page: %q", got)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#signout"))); err != nil {
		t.Fatal(err)
	}
	if got := webtest.Text(t, ctx, "#message"); got != "You are signed out of frognano." {
		t.Fatalf("after sign-out: %q", got)
	}
	b.gh.SignInAs("bob")
	if got := navigate(t, b, ctx, b.srv.URL+"/runs/octo/secret"); got != "No such run" {
		t.Errorf("bob sees %q, want the refusal", got)
	}
	if who := webtest.Text(t, ctx, "#who"); who != "bob" {
		t.Errorf("#who = %q, want bob", who)
	}
	webtest.Screenshot(t, ctx, "bob-refused")
	if got := b.gh.OAuthExchanges(); strings.Join(got, ",") != "alice,bob" {
		t.Errorf("code exchanges = %v", got)
	}
}

// TestBrowserSharedToken signs in with the shared access token's form: a wrong token is
// refused with a message, the right one opens the page asked for.
func TestBrowserSharedToken(t *testing.T) {
	t.Parallel()
	b := setup(t, testToken)
	ctx := webtest.Browser(t)

	if got := navigate(t, b, ctx, b.srv.URL+"/runs/octo/public"); got != "Sign in to frognano" {
		t.Fatalf("without a session: %q, want the sign-in form", got)
	}
	webtest.Screenshot(t, ctx, "form")
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#token"), "not-the-token-at-all"),
		chromedp.Click(chromedp.CSS("#signin")),
	); err != nil {
		t.Fatal(err)
	}
	// The form posts and a new page comes: wait for its message, the old page has one too.
	webtest.WaitText(t, ctx, "#message", "That is not the access token.")
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#token"), testToken),
		chromedp.Click(chromedp.CSS("#signin")),
		chromedp.WaitVisible(chromedp.CSS("#who")),
	); err != nil {
		t.Fatal(err)
	}
	if got := webtest.Text(t, ctx, "#title"); got != "Runs of octo/public" {
		t.Errorf("after the right token: %q", got)
	}
	webtest.Screenshot(t, ctx, "signed-in")
	html, err := chromedp.Run(ctx, chromedp.Evaluate[string]("document.documentElement.outerHTML"))
	if err != nil || strings.Contains(html, testToken) {
		t.Errorf("the page holds the token (%v)", err)
	}
}
