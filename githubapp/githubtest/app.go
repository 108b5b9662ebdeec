package githubtest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// appState is the App as the fake knows it: what GET /app reports, and the manifests the
// manifest flow received. Guarded by Server.mu.
type appState struct {
	name, slug  string
	permissions map[string]string // nil: appPermissions
	events      []string          // nil: the manifest's (githubapp.ManifestEvents)
	manifests   []map[string]any
	codes       map[string]map[string]any // one-time codes of the manifest flow
	converted   int
}

func (s *Server) appRoutes() {
	s.api.HandleFunc("GET "+apiPrefix+"/app", s.handleGetApp)
	s.api.HandleFunc("GET "+apiPrefix+"/app/installations", s.handleListInstallations)
	s.api.HandleFunc("GET "+apiPrefix+"/app/installations/{installation_id}", s.handleGetInstallation)
	s.api.HandleFunc("POST "+apiPrefix+"/app-manifests/{code}/conversions", s.handleManifestConversion)
	s.web = http.NewServeMux()
	s.web.HandleFunc("POST /settings/apps/new", s.handleNewAppFromManifest)
	s.web.HandleFunc("POST /organizations/{org}/settings/apps/new", s.handleNewAppFromManifest)
}

// SetAppPermissions replaces the permissions the App was granted (what GET /app and
// installations report), e.g. to test a missing one. Installation tokens are not affected.
func (s *Server) SetAppPermissions(p map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.app.permissions = maps.Clone(p)
}

// SetAppEvents replaces the events the App subscribes to (what GET /app reports, and the
// installations that were not given their own), e.g. to test a missing one.
func (s *Server) SetAppEvents(events ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.app.events = slices.Clone(events)
}

// Manifests returns the App manifests posted to the manifest flow's web page, decoded.
func (s *Server) Manifests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.app.manifests)
}

func (s *Server) appPerms() map[string]string {
	if s.app.permissions != nil {
		return s.app.permissions
	}
	return appPermissions
}

func (s *Server) appEvents() []string {
	if s.app.events != nil {
		return s.app.events
	}
	return []string{"issues", "issue_comment", "pull_request_review", "pull_request_review_comment", "check_suite", "pull_request"}
}

// integrationJSON is the "integration" schema: the App as GET /app and the manifest
// conversion describe it.
func (s *Server) integrationJSON() map[string]any {
	name, slug := s.app.name, s.app.slug
	if name == "" {
		name, slug = "frognano", AppSlug
	}
	n := 0
	for range s.installations {
		n++
	}
	return map[string]any{
		"id": s.AppID, "slug": slug, "node_id": fmt.Sprintf("A_%d", s.AppID), "client_id": "Iv1.fake" + slug,
		"owner": s.userJSON("octo-org", 1, "Organization"), "name": name, "description": "",
		"external_url": s.URL + "/frognano", "html_url": s.URL + "/apps/" + slug,
		"created_at": timestamp(epoch), "updated_at": timestamp(epoch),
		"permissions": s.appPerms(), "events": s.appEvents(), "installations_count": n,
	}
}

// handleGetApp is GET /app, authenticated as the App (a JWT).
func (s *Server) handleGetApp(w http.ResponseWriter, r *http.Request) {
	if err := s.verifyJWT(r); err != nil {
		writeError(w, http.StatusUnauthorized, err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	writeJSON(w, http.StatusOK, s.integrationJSON())
}

// handleListInstallations is GET /app/installations, authenticated as the App.
func (s *Server) handleListInstallations(w http.ResponseWriter, r *http.Request) {
	if err := s.verifyJWT(r); err != nil {
		writeError(w, http.StatusUnauthorized, err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := slices.Sorted(maps.Keys(s.installations))
	out := []any{}
	for _, id := range ids {
		out = append(out, s.installationJSON(id, s.installationOwner(id)))
	}
	writeJSON(w, http.StatusOK, out)
}

// handleNewAppFromManifest is the web page a browser posts the manifest to (the form field
// "manifest", the query parameter "state"). GitHub shows a confirmation; the fake confirms at
// once and redirects to the manifest's redirect_url with a one-time code and the state.
func (s *Server) handleNewAppFromManifest(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(r.PostForm.Get("manifest")), &m); err != nil {
		s.t.Errorf("fake GitHub: the manifest is not JSON: %v", err)
		http.Error(w, "Invalid manifest", http.StatusUnprocessableEntity)
		return
	}
	hook, _ := m["hook_attributes"].(map[string]any)
	redirect, _ := m["redirect_url"].(string)
	if m["url"] == nil || hook == nil || hook["url"] == nil || redirect == "" {
		s.t.Errorf("fake GitHub: the manifest lacks url, hook_attributes.url or redirect_url: %v", m)
		http.Error(w, "Invalid manifest", http.StatusUnprocessableEntity)
		return
	}
	var b [10]byte
	_, _ = rand.Read(b[:])
	code := hex.EncodeToString(b[:])
	s.mu.Lock()
	s.app.manifests = append(s.app.manifests, m)
	if s.app.codes == nil {
		s.app.codes = map[string]map[string]any{}
	}
	s.app.codes[code] = m
	s.mu.Unlock()
	u, err := url.Parse(redirect)
	if err != nil {
		http.Error(w, "Invalid redirect_url", http.StatusUnprocessableEntity)
		return
	}
	q := u.Query()
	q.Set("code", code)
	if st := r.URL.Query().Get("state"); st != "" {
		q.Set("state", st)
	}
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// handleManifestConversion is POST /app-manifests/{code}/conversions: unauthenticated, the
// code works once; the answer is the integration plus client_id, client_secret,
// webhook_secret and pem (status 201).
func (s *Server) handleManifestConversion(w http.ResponseWriter, r *http.Request) {
	code := r.PathValue("code")
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.app.codes[code]
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	delete(s.app.codes, code)
	s.app.converted++
	name, _ := m["name"].(string)
	if name == "" {
		name = "frognano"
	}
	s.app.name = name
	s.app.slug = strings.ToLower(strings.ReplaceAll(name, " ", "-"))
	if p, ok := m["default_permissions"].(map[string]any); ok {
		s.app.permissions = map[string]string{}
		for k, v := range p {
			s.app.permissions[k], _ = v.(string)
		}
	}
	if ev, ok := m["default_events"].([]any); ok {
		s.app.events = []string{}
		for _, e := range ev {
			if e, ok := e.(string); ok {
				s.app.events = append(s.app.events, e)
			}
		}
	}
	out := s.integrationJSON()
	var b [20]byte
	_, _ = rand.Read(b[:])
	out["client_secret"] = hex.EncodeToString(b[:])
	_, _ = rand.Read(b[:])
	out["webhook_secret"] = hex.EncodeToString(b[:])
	out["pem"] = string(s.PrivateKey)
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) isWebRoute(r *http.Request) bool {
	_, pattern := s.web.Handler(r)
	return pattern != ""
}
