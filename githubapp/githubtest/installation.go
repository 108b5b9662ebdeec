package githubtest

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
)

// installState is what one installation granted, when a test changed it from the App's
// defaults. Guarded by Server.mu.
type installState struct {
	permissions map[string]string // nil: appPermissions
	events      []string          // nil: the App's events
	suspended   bool
}

// SetInstallationPermissions replaces what installation id has granted, as an installation
// that has not approved the App's new permissions keeps its old ones. Token requests for more
// are refused (422) as GitHub refuses them, and GET /app/installations/{id} reports these.
func (s *Server) SetInstallationPermissions(id int64, p map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.installState(id).permissions = maps.Clone(p)
}

// SetInstallationEvents replaces the webhook events installation id subscribes to.
func (s *Server) SetInstallationEvents(id int64, events ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.installState(id).events = slices.Clone(events)
}

// SuspendInstallation suspends (or unsuspends) the App on installation id: its token requests
// get 403, as on GitHub.
func (s *Server) SuspendInstallation(id int64, suspended bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.installState(id).suspended = suspended
}

func (s *Server) installState(id int64) *installState {
	if s.inst == nil {
		s.inst = map[int64]*installState{}
	}
	st, ok := s.inst[id]
	if !ok {
		st = &installState{}
		s.inst[id] = st
	}
	return st
}

// installPerms are the permissions installation id granted.
func (s *Server) installPerms(id int64) map[string]string {
	if st := s.inst[id]; st != nil && st.permissions != nil {
		return st.permissions
	}
	return appPermissions
}

func (s *Server) installEvents(id int64) []string {
	if st := s.inst[id]; st != nil && st.events != nil {
		return st.events
	}
	return s.appEvents()
}

// installationJSON is the "installation" schema for installation id, whose repositories belong
// to owner.
func (s *Server) installationJSON(id int64, owner string) map[string]any {
	var suspendedBy, suspendedAt any
	if st := s.inst[id]; st != nil && st.suspended {
		suspendedBy, suspendedAt = s.userJSON(owner, 1, "Organization"), timestamp(epoch)
	}
	return map[string]any{
		"id": id, "app_id": s.AppID, "app_slug": AppSlug, "target_id": 1, "target_type": "Organization",
		"account": s.userJSON(owner, 1, "Organization"), "repository_selection": "selected",
		"access_tokens_url": s.apiURL("/app/installations/%d/access_tokens", id),
		"repositories_url":  s.apiURL("/installation/repositories"), "html_url": fmt.Sprintf("%s/settings/installations/%d", s.URL, id),
		"permissions": s.installPerms(id), "events": s.installEvents(id), "single_file_name": nil,
		"created_at": timestamp(epoch), "updated_at": timestamp(epoch), "suspended_by": suspendedBy, "suspended_at": suspendedAt,
	}
}

func (s *Server) installationOwner(id int64) string {
	if repos := s.installations[id]; len(repos) > 0 {
		return repos[0].Owner
	}
	return "octo-org"
}

// handleGetInstallation is GET /app/installations/{installation_id}, authenticated as the App.
func (s *Server) handleGetInstallation(w http.ResponseWriter, r *http.Request) {
	if err := s.verifyJWT(r); err != nil {
		writeError(w, http.StatusUnauthorized, err.Error())
		return
	}
	id, err := strconv.ParseInt(r.PathValue("installation_id"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.installations[id]; err != nil || !ok {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, s.installationJSON(id, s.installationOwner(id)))
}
