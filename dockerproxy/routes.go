package dockerproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"

	"github.com/distribution/reference"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"

	envpkg "github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/sandbox"
)

// The endpoints frognano calls, and nothing else:
//
//	GET|HEAD /_ping, GET /version                               negotiation, doctor
//	GET /containers/json                                        Prune, sandbox ls (only frognano's are listed)
//	POST /containers/create                                     sandboxes, setup, disk watcher, pins (checked)
//	GET /containers/{id}/json                                   inspect
//	GET /containers/{id}/stats                                  a sandbox's CPU time and peak memory at Close (one shot)
//	GET /containers/{id}/changes                                what setup changed, for the seal check (runner/sandbox Seal)
//	POST /containers/{id}/start|stop|kill|wait|attach           lifecycle, the watcher's stream
//	DELETE /containers/{id}                                     Close, Prune
//	PUT /containers/{id}/archive                                copying the checkout and the executor in
//	POST /containers/{id}/exec, POST /exec/{id}/start,          the executor, tests, the OOM counter
//	  GET /exec/{id}/json
//	POST /commit                                                an environment image from a setup container
//	GET /images/json, GET /images/{name}/json                   images and the environment cache (the list: env images only)
//	POST /images/{name}/tag, DELETE /images/{name}              the cache's use mark and eviction (env images only)
//	GET /networks/{id}                                          preflight of the setup network (allowed networks only;
//	                                                              the answer names the network, nothing on it)
//	DELETE /volumes/{name}                                      a sandbox's workspace volume
//
// Each per-container call needs a container labelled dev.frognano.sandbox=1 (and of the
// proxy's owner when it has one), and goes to the engine by the full ID the check saw, so that
// a name cannot be made to mean another container between the check and the call. A container
// that is not the client's is answered as one that does not exist (hide.go).

// allowQuery refuses query parameters outside allowed.
func allowQuery(q url.Values, allowed ...string) error {
	for k := range q {
		found := false
		for _, a := range allowed {
			if k == a {
				found = true
			}
		}
		if !found {
			return refuse("query parameter %q is not allowed here", k)
		}
	}
	return nil
}

// check decides what to do with a request: a forward, or an error (a *Refusal for what the
// client asked wrong).
func (p *Proxy) check(r *http.Request) (*forward, error) {
	full := r.URL.Path
	if full == "" || path.Clean(full) != full {
		return nil, badRequest("path %q is not clean", full)
	}
	rest, err := splitVersion(full)
	if err != nil {
		return nil, err
	}
	prefix := strings.TrimSuffix(full, rest)
	q := r.URL.Query()
	ctx := r.Context()
	fw := &forward{query: q}
	to := func(p string) { fw.path = prefix + p }
	m := r.Method

	switch {
	case rest == "/_ping" && (m == http.MethodGet || m == http.MethodHead), rest == "/version" && m == http.MethodGet:
		to(rest)
		fw.query = url.Values{}
		fw.version = rest == "/version"
		return fw, nil
	case rest == "/containers/json" && m == http.MethodGet:
		// No size: the engine would walk every listed container's whole layer to answer it,
		// and frognano never asks for it.
		if err := allowQuery(q, "all", "limit", "filters"); err != nil {
			return nil, err
		}
		args, err := filters.FromJSON(q.Get("filters"))
		if err != nil {
			return nil, badRequest("unreadable filters: %v", err)
		}
		args.Add("label", sandbox.LabelSandbox+"=1")
		s, err := filters.ToJSON(args)
		if err != nil {
			return nil, err
		}
		q.Set("filters", s)
		to(rest)
		fw.list = p.cfg.Owner != ""
		return fw, nil
	case rest == "/containers/create" && m == http.MethodPost:
		if err := allowQuery(q, "name", "platform"); err != nil {
			return nil, err
		}
		if n := q.Get("name"); n != "" {
			if err := validName(n); err != nil {
				return nil, err
			}
		}
		body, err := readJSON(r)
		if err != nil {
			return nil, err
		}
		if fw.body, err = p.checkCreate(ctx, body, p); err != nil {
			return nil, err
		}
		to(rest)
		name := q.Get("name")
		fw.serve = func(w http.ResponseWriter, out *http.Request) { p.serveCreate(w, out, name) }
		return fw, nil
	case strings.HasPrefix(rest, "/containers/"):
		return p.checkContainerCall(r, strings.TrimPrefix(rest, "/containers/"), q, fw, to)
	case strings.HasPrefix(rest, "/exec/"):
		return p.checkExecCall(r, strings.TrimPrefix(rest, "/exec/"), fw, to)
	case rest == "/commit" && m == http.MethodPost:
		return p.checkCommit(r, q, fw, to)
	case rest == "/images/json" && m == http.MethodGet:
		if err := allowQuery(q, "all", "filters", "digests", "shared-size", "manifests"); err != nil {
			return nil, err
		}
		// frognano lists its environment images alone (runner/env's cache); the others are
		// other workloads' (hide.go).
		args, err := filters.FromJSON(q.Get("filters"))
		if err != nil {
			return nil, badRequest("unreadable filters: %v", err)
		}
		args.Add("label", envpkg.LabelEnv+"=1")
		s, err := filters.ToJSON(args)
		if err != nil {
			return nil, fmt.Errorf("encoding the image list's filters: %w", err)
		}
		q.Set("filters", s)
		to(rest)
		fw.serve = p.serveImageList
		return fw, nil
	case strings.HasPrefix(rest, "/images/"):
		return p.checkImageCall(r, strings.TrimPrefix(rest, "/images/"), q, fw, to)
	case strings.HasPrefix(rest, "/networks/") && m == http.MethodGet:
		id := strings.TrimPrefix(rest, "/networks/")
		if id == "" || strings.Contains(id, "/") {
			break
		}
		// frognano inspects its setup network alone (preflight); another network's inspect
		// lists the engine's other containers on it and their addresses.
		if !p.networks[id] {
			return nil, refuse("network %q is not one the sandboxes may join", id)
		}
		if err := allowQuery(q, "verbose", "scope"); err != nil {
			return nil, err
		}
		// Even this network's inspect lists every container on it, frognano's or not, and
		// verbose adds a swarm's services and nodes: the answer is cut (hide.go).
		q.Del("verbose")
		to(rest)
		fw.serve = p.serveNetwork
		return fw, nil
	case strings.HasPrefix(rest, "/volumes/") && m == http.MethodDelete:
		return p.checkVolumeRemove(r, strings.TrimPrefix(rest, "/volumes/"), q, fw, to)
	}
	return nil, refuse("this endpoint is not one frognano uses")
}

// checkContainerCall checks /containers/{id}/... calls.
func (p *Proxy) checkContainerCall(r *http.Request, tail string, q url.Values, fw *forward, to func(string)) (*forward, error) {
	ref, op, _ := strings.Cut(tail, "/")
	if strings.Contains(op, "/") {
		return nil, refuse("this endpoint is not one frognano uses")
	}
	type rule struct {
		method string
		query  []string
	}
	rules := map[string]rule{
		"json":    {http.MethodGet, []string{"size"}},
		"stats":   {http.MethodGet, []string{"stream", "one-shot"}},
		"changes": {http.MethodGet, nil},
		"start":   {http.MethodPost, nil},
		"stop":    {http.MethodPost, []string{"t", "signal"}},
		"kill":    {http.MethodPost, []string{"signal"}},
		"wait":    {http.MethodPost, []string{"condition"}},
		"attach":  {http.MethodPost, []string{"stream", "stdin", "stdout", "stderr", "logs", "detachKeys"}},
		"archive": {http.MethodPut, []string{"path", "noOverwriteDirNonDir", "copyUIDGID"}},
		"exec":    {http.MethodPost, nil},
		"":        {http.MethodDelete, []string{"force", "v"}},
	}
	ru, ok := rules[op]
	if !ok || r.Method != ru.method {
		return nil, refuse("this endpoint is not one frognano uses")
	}
	if err := allowQuery(q, ru.query...); err != nil {
		return nil, err
	}
	if err := validName(ref); err != nil {
		return nil, err
	}
	id, labels, err := p.ownContainer(r.Context(), p, ref)
	if err != nil {
		return nil, err
	}
	switch op {
	case "stats":
		// One reading at a sandbox's Close; a stream would hold a connection open for nothing.
		if st := q.Get("stream"); st != "0" && st != "false" {
			return nil, refuse("stats are served one shot only (stream=0)")
		}
	case "start":
		// Old API versions read a HostConfig from start's body: none may come.
		body, err := readJSON(r)
		if err != nil {
			return nil, err
		}
		if len(strings.TrimSpace(string(body))) > 0 {
			return nil, refuse("start takes no body")
		}
		fw.body = []byte{}
		// What runs has limits: every container frognano starts has them (a pin, which has
		// none, is never started), and one without could take the engine host's memory or
		// process IDs (a fork bomb) from everything else on it.
		var info container.InspectResponse
		if err := p.get(r.Context(), "/containers/"+id+"/json", &info); err != nil {
			return nil, err
		}
		if h := info.HostConfig; h == nil || h.Memory <= 0 || h.PidsLimit == nil || *h.PidsLimit <= 0 {
			return nil, refuse("a container without a memory and a pids limit may not be started")
		}
	case "exec":
		if labels[sandbox.LabelWatches] != "" {
			return nil, refuse("exec in a disk watcher is not allowed")
		}
		body, err := readJSON(r)
		if err != nil {
			return nil, err
		}
		if fw.body, err = checkExec(body); err != nil {
			return nil, err
		}
	case "attach":
		fw.hijack = true
	case "archive":
		fw.stream = true
	}
	if op == "" {
		to("/containers/" + id)
	} else {
		to("/containers/" + id + "/" + op)
	}
	return fw, nil
}

// checkExecCall checks /exec/{id}/start and /exec/{id}/json.
func (p *Proxy) checkExecCall(r *http.Request, tail string, fw *forward, to func(string)) (*forward, error) {
	ref, op, _ := strings.Cut(tail, "/")
	switch {
	case op == "start" && r.Method == http.MethodPost, op == "json" && r.Method == http.MethodGet:
	default:
		return nil, refuse("this endpoint is not one frognano uses")
	}
	if err := allowQuery(fw.query); err != nil {
		return nil, err
	}
	if err := validName(ref); err != nil {
		return nil, err
	}
	var ex container.ExecInspect
	err := p.get(r.Context(), "/exec/"+url.PathEscape(ref)+"/json", &ex)
	var rf *Refusal
	if errors.As(err, &rf) && rf.Status == http.StatusNotFound {
		return nil, hiddenExec(rf.Reason)
	}
	if err != nil {
		return nil, err
	}
	// An exec of another workload's container is answered as one that does not exist.
	_, labels, err := p.ownContainer(r.Context(), p, ex.ContainerID)
	if errors.As(err, &rf) && rf.Status == http.StatusNotFound {
		return nil, hiddenExec(rf.detail)
	}
	if err != nil {
		return nil, err
	}
	if labels[sandbox.LabelWatches] != "" {
		return nil, refuse("exec in a disk watcher is not allowed")
	}
	if op == "start" {
		body, err := readJSON(r)
		if err != nil {
			return nil, err
		}
		if fw.body, err = checkExecStart(body); err != nil {
			return nil, err
		}
		fw.hijack = true
	}
	to("/exec/" + ex.ExecID + "/" + op)
	return fw, nil
}

// checkCommit allows committing one of frognano's containers as an environment image.
func (p *Proxy) checkCommit(r *http.Request, q url.Values, fw *forward, to func(string)) (*forward, error) {
	if err := allowQuery(q, "container", "repo", "tag", "comment", "author", "pause"); err != nil {
		return nil, err
	}
	ref := q.Get("container")
	if err := validName(ref); err != nil {
		return nil, err
	}
	if repo := q.Get("repo"); !isEnvRepo(repo) {
		return nil, refuse("a commit must be tagged %s:KEY, not %q", envRepo(), repo)
	}
	id, _, err := p.ownContainer(r.Context(), p, ref)
	if err != nil {
		return nil, err
	}
	body, err := readJSON(r)
	if err != nil {
		return nil, err
	}
	if fw.body, err = checkCommitConfig(body); err != nil {
		return nil, err
	}
	q.Set("container", id)
	to("/commit")
	return fw, nil
}

// imageName is what an image reference may hold.
var imageName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._:/@-]{0,511}$`)

// envRepo is the repository of environment images (runner/env's Ref without the key).
func envRepo() string { return strings.TrimSuffix(envpkg.Ref(""), ":") }

// isEnvRepo reports whether repo names envRepo, in the short form or the normalized one the
// Docker client sends (with the default registry and library/ prefix).
func isEnvRepo(repo string) bool {
	named, err := reference.ParseNormalizedNamed(repo)
	if err != nil {
		return false
	}
	_, tagged := named.(reference.Tagged)
	_, digested := named.(reference.Digested)
	return !tagged && !digested && reference.FamiliarName(named) == envRepo()
}

// checkImageCall checks image inspect (any), and tag and remove (environment images only).
func (p *Proxy) checkImageCall(r *http.Request, tail string, q url.Values, fw *forward, to func(string)) (*forward, error) {
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(tail, "/json"):
		name := strings.TrimSuffix(tail, "/json")
		if !imageName.MatchString(name) {
			return nil, badRequest("%q is not an image name or ID", name)
		}
		if err := allowQuery(q, "manifests"); err != nil {
			return nil, err
		}
		to("/images/" + name + "/json")
		fw.serve = func(w http.ResponseWriter, out *http.Request) { p.serveImageInspect(w, out, name) }
		return fw, nil
	case r.Method == http.MethodPost && strings.HasSuffix(tail, "/tag"):
		name := strings.TrimSuffix(tail, "/tag")
		if err := allowQuery(q, "repo", "tag"); err != nil {
			return nil, err
		}
		if repo := q.Get("repo"); !isEnvRepo(repo) {
			return nil, refuse("only %s tags may be made, not %q", envRepo(), repo)
		}
		id, err := p.envImage(r.Context(), name)
		if err != nil {
			return nil, err
		}
		to("/images/" + id + "/tag")
		return fw, nil
	case r.Method == http.MethodDelete:
		if err := allowQuery(q, "force", "noprune"); err != nil {
			return nil, err
		}
		if f := q.Get("force"); f != "" && f != "0" && f != "false" {
			return nil, refuse("forced image removal is not allowed")
		}
		if _, err := p.envImage(r.Context(), tail); err != nil {
			return nil, err
		}
		to("/images/" + tail)
		return fw, nil
	}
	return nil, refuse("this endpoint is not one frognano uses")
}

// envImage returns the ID of an environment image, or a refusal for any other image.
func (p *Proxy) envImage(ctx context.Context, name string) (string, error) {
	if name == "" {
		return "", badRequest("no image named")
	}
	img, err := p.image(ctx, name)
	if err != nil {
		return "", err
	}
	if img.Labels[envpkg.LabelEnv] != "1" {
		return "", refuse("image %q is not a frognano environment image (label %s=1)", name, envpkg.LabelEnv)
	}
	return img.ID, nil
}

// checkVolumeRemove allows removing an anonymous volume that no other container uses.
func (p *Proxy) checkVolumeRemove(r *http.Request, name string, q url.Values, fw *forward, to func(string)) (*forward, error) {
	if err := allowQuery(q, "force"); err != nil {
		return nil, err
	}
	if !anonymousVolume.MatchString(name) {
		return nil, refuse("only a sandbox's anonymous volume may be removed, not %q", name)
	}
	users, err := p.volumeUsers(r.Context(), name)
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		if err := p.ours(u); err != nil {
			return nil, refuse("volume %s is used by a container that is not frognano's", name)
		}
	}
	to("/volumes/" + name)
	return fw, nil
}

// engineJSON sends out to the engine and decodes its JSON answer of at most limit bytes into
// v and returns the answer's header. When the engine fails, answers other than 200 or with
// what v cannot hold, it passes that answer on to w (or a 502) and reports false.
func (p *Proxy) engineJSON(w http.ResponseWriter, out *http.Request, limit int64, v any) (http.Header, bool) {
	out = out.Clone(out.Context())
	out.RequestURI = ""
	resp, err := p.client.Transport.RoundTrip(out)
	if err != nil {
		writeError(w, http.StatusBadGateway, "frognano docker-proxy: the Docker engine did not answer: "+err.Error())
		return nil, false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err == nil && resp.StatusCode == http.StatusOK {
		err = json.Unmarshal(body, v)
	}
	if err != nil || resp.StatusCode != http.StatusOK {
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		w.Write(body)
		return nil, false
	}
	return resp.Header, true
}

// serveList answers a container list with only the owner's containers (a label filter
// cannot say "O or *@O"). The entries are passed on as the engine wrote them.
func (p *Proxy) serveList(w http.ResponseWriter, out *http.Request) {
	var list []json.RawMessage
	if _, ok := p.engineJSON(w, out, 64<<20, &list); !ok {
		return
	}
	kept := make([]json.RawMessage, 0, len(list))
	for _, raw := range list {
		var c struct{ Labels map[string]string }
		if json.Unmarshal(raw, &c) == nil && p.ours(c.Labels) == nil {
			kept = append(kept, raw)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(kept)
}

// serveVersion answers the engine's /version with the proxy added to its components.
func (p *Proxy) serveVersion(w http.ResponseWriter, out *http.Request) {
	var v map[string]json.RawMessage
	header, ok := p.engineJSON(w, out, 1<<20, &v)
	if !ok {
		return
	}
	var comps []json.RawMessage
	if raw, ok := v["Components"]; ok {
		_ = json.Unmarshal(raw, &comps)
	}
	me, _ := json.Marshal(map[string]any{"Name": ComponentName, "Version": p.cfg.Version,
		"Details": map[string]string{"Owner": p.cfg.Owner}})
	comps = append(comps, me)
	v["Components"], _ = json.Marshal(comps)
	for _, h := range []string{"Api-Version", "Docker-Experimental", "Ostype", "Server"} {
		if x := header.Get(h); x != "" {
			w.Header().Set(h, x)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// get asks the engine for p (under minAPIVersion) and decodes the JSON answer into v. A 404 is
// a refusal with status 404.
func (p *Proxy) get(ctx context.Context, rel string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/v"+minAPIVersion+rel, nil)
	if err != nil {
		return badRequest("%v", err)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("asking the engine: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("reading the engine's answer: %w", err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return &Refusal{Status: http.StatusNotFound, Reason: "no such object: " + strings.TrimSpace(string(body))}
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("the engine answered %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return json.Unmarshal(body, v)
}

func (p *Proxy) container(ctx context.Context, ref string) (string, map[string]string, error) {
	if err := validName(ref); err != nil {
		return "", nil, err
	}
	var info container.InspectResponse
	if err := p.get(ctx, "/containers/"+url.PathEscape(ref)+"/json", &info); err != nil {
		return "", nil, err
	}
	if info.ContainerJSONBase == nil || info.ID == "" {
		return "", nil, fmt.Errorf("the engine's inspect of %s has no ID", ref)
	}
	var labels map[string]string
	if info.Config != nil {
		labels = info.Config.Labels
	}
	return info.ID, labels, nil
}

func (p *Proxy) image(ctx context.Context, ref string) (imageFacts, error) {
	if !imageName.MatchString(ref) || path.Clean("/"+ref) != "/"+ref {
		return imageFacts{}, badRequest("%q is not an image name or ID", ref)
	}
	var info image.InspectResponse
	if err := p.get(ctx, "/images/"+ref+"/json", &info); err != nil {
		return imageFacts{}, err
	}
	f := imageFacts{ID: info.ID}
	if info.Config != nil {
		f.Labels, f.Volumes = info.Config.Labels, info.Config.Volumes
	}
	return f, nil
}

func (p *Proxy) volumeUsers(ctx context.Context, name string) ([]map[string]string, error) {
	args, _ := filters.ToJSON(filters.NewArgs(filters.Arg("volume", name)))
	var list []container.Summary
	if err := p.get(ctx, "/containers/json?all=1&filters="+url.QueryEscape(args), &list); err != nil {
		return nil, err
	}
	users := make([]map[string]string, 0, len(list))
	for _, c := range list {
		users = append(users, c.Labels)
	}
	return users, nil
}
