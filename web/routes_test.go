package web

import (
	"net/http"
	"testing"

	"github.com/go-chi/chi/v5"
)

// TestPagesAnswerGETOnly: the run pages change nothing, so no request of theirs needs to be
// kept from other sites. The routes that do change something are sign-in's (web/auth), and
// those refuse other origins (auth's TestEveryChangeIsSameOriginOnly); this test's stand-in
// for auth mounts GET routes only.
func TestPagesAnswerGETOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := chi.NewRouter()
	b.pages.Routes(r)
	seen := map[string]bool{}
	err := chi.Walk(r, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		seen[method+" "+route] = true
		if method != http.MethodGet && method != http.MethodHead {
			t.Errorf("%s %s: the run pages answer GET only", method, route)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !seen["GET /runs"] || !seen["GET /runs/{id:[0-9]+}/events"] {
		t.Errorf("the walk missed the pages: %v", seen)
	}
}
