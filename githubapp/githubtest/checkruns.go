package githubtest

import (
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"unicode/utf8"
)

// This file fakes the Checks API's output and annotations of the check runs an App creates
// (POST /check-runs) and updates (PATCH /check-runs/{id}), in the shapes of GitHub's OpenAPI
// description: at most 50 annotations a request, each with a path, start_line, end_line,
// annotation_level (notice, warning or failure) and message, and optional title (at most 255
// characters), raw_details and columns (only on one line). A bad one gets GitHub's 422 and
// changes nothing. Annotations are kept apart from the check run, as GitHub keeps them (its
// check run shows annotations_count and annotations_url), and appended by each update.

const (
	maxAnnotationsPerRequest = 50
	maxOutputText            = 65535
	maxAnnotationBytes       = 64 << 10
	maxAnnotationTitle       = 255
)

var annotationKeys = map[string]bool{"path": true, "start_line": true, "end_line": true, "start_column": true,
	"end_column": true, "annotation_level": true, "message": true, "title": true, "raw_details": true}

// checkOutput validates a request's output (create: title and summary required; update:
// summary) and returns its annotations; on a problem it has answered 422 and returns false.
func checkOutput(w http.ResponseWriter, body map[string]any, create bool) ([]map[string]any, bool) {
	raw, present := body["output"]
	if !present {
		return nil, true
	}
	out, ok := raw.(map[string]any)
	if !ok {
		writeValidation(w, "CheckRun", "output", "invalid", "output is not an object")
		return nil, false
	}
	for _, f := range []string{"title", "summary", "text"} {
		v, has := out[f]
		s, isString := v.(string)
		switch {
		case !has && (f == "summary" || f == "title" && create):
			writeValidation(w, "CheckRun", "output."+f, "missing_field", "")
			return nil, false
		case has && !isString:
			writeValidation(w, "CheckRun", "output."+f, "invalid", "")
			return nil, false
		case utf8.RuneCountInString(s) > maxOutputText:
			writeValidation(w, "CheckRun", "output."+f, "invalid", "is too long (maximum is 65535 characters)")
			return nil, false
		}
	}
	v, has := out["annotations"]
	if !has {
		return nil, true
	}
	list, ok := v.([]any)
	if !ok {
		writeValidation(w, "CheckRun", "output.annotations", "invalid", "")
		return nil, false
	}
	if len(list) > maxAnnotationsPerRequest {
		writeValidation(w, "CheckRun", "output.annotations", "invalid", "Only 50 annotations are allowed per request")
		return nil, false
	}
	var anns []map[string]any
	for i, item := range list {
		a, ok := item.(map[string]any)
		if !ok {
			writeValidation(w, "CheckRun", "output.annotations", "invalid", fmt.Sprintf("annotation %d is not an object", i))
			return nil, false
		}
		if why := badAnnotation(a); why != "" {
			writeValidation(w, "CheckRun", "output.annotations", "invalid", fmt.Sprintf("annotation %d: %s", i, why))
			return nil, false
		}
		anns = append(anns, a)
	}
	return anns, true
}

// badAnnotation says what GitHub would refuse in a, or "".
func badAnnotation(a map[string]any) string {
	for k := range a {
		if !annotationKeys[k] {
			return "unknown field " + k
		}
	}
	path, _ := a["path"].(string)
	msg, _ := a["message"].(string)
	level, _ := a["annotation_level"].(string)
	start, okStart := intField(a, "start_line")
	end, okEnd := intField(a, "end_line")
	switch {
	case path == "":
		return "path is missing"
	case msg == "":
		return "message is missing"
	case len(msg) > maxAnnotationBytes:
		return "message is over 64 KB"
	case level != "notice" && level != "warning" && level != "failure":
		return "annotation_level is not notice, warning or failure"
	case !okStart || !okEnd || start < 1 || end < start:
		return "start_line and end_line must be lines from 1, end_line not before start_line"
	}
	if t, has := a["title"]; has {
		if s, ok := t.(string); !ok || utf8.RuneCountInString(s) > maxAnnotationTitle {
			return "title is not a string of at most 255 characters"
		}
	}
	if d, has := a["raw_details"]; has {
		if s, ok := d.(string); !ok || len(s) > maxAnnotationBytes {
			return "raw_details is not a string of at most 64 KB"
		}
	}
	_, hasSC := a["start_column"]
	_, hasEC := a["end_column"]
	if (hasSC || hasEC) && start != end {
		return "start_column and end_column are only allowed on one line"
	}
	for _, c := range []string{"start_column", "end_column"} {
		if _, has := a[c]; has {
			if n, ok := intField(a, c); !ok || n < 1 {
				return c + " must be a column from 1"
			}
		}
	}
	return ""
}

// intField reads a JSON integer.
func intField(a map[string]any, k string) (int, bool) {
	f, ok := a[k].(float64)
	if !ok || f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
}

// recordOutput appends anns to check run id's annotations and gives body's output GitHub's
// response shape: annotations_count and annotations_url instead of the annotations.
func (s *Server) recordOutput(repo *Repo, id int64, body map[string]any, anns []map[string]any) {
	if s.ann == nil {
		s.ann = map[int64][]map[string]any{}
	}
	s.ann[id] = append(s.ann[id], anns...)
	if out, ok := body["output"].(map[string]any); ok {
		out = maps.Clone(out)
		delete(out, "annotations")
		out["annotations_count"] = len(s.ann[id])
		out["annotations_url"] = s.apiURL("/repos/%s/check-runs/%d/annotations", repo.FullName(), id)
		body["output"] = out
	}
}

// handleUpdateCheckRun is PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}: the fields
// given replace the check run's, and the output's annotations are appended to its own.
func (s *Server) handleUpdateCheckRun(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "checks", "write")
	if repo == nil {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("check_run_id"), 10, 64)
	var body map[string]any
	if !decode(w, r, &body) {
		return
	}
	anns, ok := checkOutput(w, body, false)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	run, found := repo.checkRuns[id]
	if !found {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	for k, v := range body {
		if k != "head_sha" && k != "id" {
			run[k] = v
		}
	}
	s.recordOutput(repo, id, run, anns)
	writeJSON(w, http.StatusOK, run)
}

// CheckRunAnnotations returns the annotations of check run id, in the order they came.
func (s *Server) CheckRunAnnotations(id int64) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, a := range s.ann[id] {
		out = append(out, maps.Clone(a))
	}
	return out
}
