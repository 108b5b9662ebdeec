package auth

import (
	"html/template"
	"net/http"
)

// page is one of the few pages auth shows itself: sign-in, signed out, and errors. It holds
// no secret: the CSRF value is the only hidden field, and it is not one.
type page struct {
	Title   string
	Message string
	Form    bool   // the shared-token sign-in form
	Next    string // where the form returns to
	CSRF    string
	Logout  bool // the sign-out button
	Link    string
	LinkTxt string
}

var pageTmpl = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · frognano</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#1f2328}
h1{font-size:1.4rem}label{display:block;margin:1rem 0 .25rem}input[type=password]{width:100%;padding:.4rem;font:inherit}
button{margin-top:1rem;padding:.4rem 1rem;font:inherit}.msg{color:#57606a}
</style></head>
<body><main>
<h1 id="title">{{.Title}}</h1>
{{if .Message}}<p class="msg" id="message">{{.Message}}</p>{{end}}
{{if .Form}}<form method="post" action="/login">
<input type="hidden" name="next" value="{{.Next}}"><input type="hidden" name="csrf" value="{{.CSRF}}">
<label for="token">Access token</label><input type="password" id="token" name="token" autocomplete="current-password" required autofocus>
<button type="submit" id="signin">Sign in</button></form>{{end}}
{{if .Logout}}<form method="post" action="/logout"><button type="submit" id="signout">Sign out</button></form>{{end}}
{{if .Link}}<p><a id="link" href="{{.Link}}">{{.LinkTxt}}</a></p>{{end}}
</main></body></html>
`))

// render writes p with status. Pages of auth are never cached, never framed, and send no
// referrer (the OAuth callback's address holds the one-time code).
func render(w http.ResponseWriter, status int, p page) {
	noStore(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	w.WriteHeader(status)
	_ = pageTmpl.Execute(w, p)
}

func noStore(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("X-Frame-Options", "DENY")
}

// redirect sends the browser to a local path (already checked by SafeNext) or GitHub.
func redirect(w http.ResponseWriter, r *http.Request, to string, status int) {
	noStore(w)
	http.Redirect(w, r, to, status)
}

func errorPage(w http.ResponseWriter, status int, title, msg string) {
	render(w, status, page{Title: title, Message: msg, Link: "/login", LinkTxt: "Sign in again"})
}

// startSignIn is how both sign-in pages begin: a next that is not a local path is refused with
// a page, and a person already signed in goes straight to next; ok is false when it answered.
func startSignIn(w http.ResponseWriter, r *http.Request, viewer func(*http.Request) (Viewer, bool)) (next string, ok bool) {
	next, err := SafeNext(r.URL.Query().Get("next"))
	if err != nil {
		errorPage(w, http.StatusBadRequest, "Cannot sign in", err.Error()+".")
		return "", false
	}
	if _, signedIn := viewer(r); signedIn {
		redirect(w, r, next, http.StatusSeeOther)
		return "", false
	}
	return next, true
}
