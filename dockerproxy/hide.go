package dockerproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"

	"github.com/distribution/reference"

	envpkg "github.com/frognano/frognano/runner/env"
)

// What the proxy hides: an engine's answers describe whatever the engine holds, and the
// engine may hold other workloads (the operator's services, other workers' sandboxes). A
// compromised service has no use for their names, IDs, addresses, labels or tags but to map
// and aim at them, so no answer the proxy passes on holds any: the answers that list (network
// inspect, image list, container list) are cut to frognano's own, and a container or exec that
// is not the client's is answered exactly as one that does not exist.

// shortID is a container ID prefix. frognano names containers by their full ID (and creates
// them under frognano-… names); the engine resolves a prefix to whichever container's ID starts
// with it, or answers that several do, so a prefix would let a client enumerate every ID on
// the engine a digit at a time.
var shortID = regexp.MustCompile(`^[0-9a-f]{1,63}$`)

// hidden is the answer for a container that is not the client's own, whatever the reason
// (none of that name, an ID prefix, not frognano's, another owner's): the same for all, so
// that the answer does not say whether the engine holds one. why goes to the proxy's log only.
func hidden(why string) *Refusal {
	return &Refusal{Status: http.StatusNotFound, Reason: "no such container among frognano's sandboxes", detail: why}
}

// hiddenExec is hidden for an exec instance.
func hiddenExec(why string) *Refusal {
	return &Refusal{Status: http.StatusNotFound, Reason: "no such exec instance among frognano's sandboxes", detail: why}
}

// ownContainer returns the full ID and labels of ref when it names one of the client's own
// containers (ours), else the answer hidden.
func (p *Proxy) ownContainer(ctx context.Context, lk lookups, ref string) (string, map[string]string, error) {
	if shortID.MatchString(ref) {
		return "", nil, hidden("a container ID prefix: only full IDs are looked up")
	}
	id, labels, err := lk.container(ctx, ref)
	var r *Refusal
	if errors.As(err, &r) && r.Status == http.StatusNotFound {
		return "", nil, hidden(r.Reason)
	}
	if err != nil {
		return "", nil, err
	}
	if err := p.ours(labels); err != nil {
		return "", nil, hidden(fmt.Sprintf("container %s: %v", id, err))
	}
	return id, labels, nil
}

// networkFields are the fields of a network inspect the proxy passes on: what names the network
// and what kind it is. frognano's setup preflight asks only whether the network exists. Dropped
// are Containers (every container on the network: name, endpoint ID, IPv4, IPv6 and MAC
// address), Services and Peers (verbose: a swarm's services, their tasks and the nodes'
// addresses), IPAM (subnets, gateways, the addresses reserved for others), Options and Labels
// (the operator's settings, a compose project's name).
var networkFields = []string{"Name", "Id", "Created", "Scope", "Driver", "EnableIPv6", "Internal", "Attachable", "Ingress", "ConfigOnly"}

// serveNetwork answers a network inspect with networkFields alone and no container on it.
func (p *Proxy) serveNetwork(w http.ResponseWriter, out *http.Request) {
	var n map[string]json.RawMessage
	if _, ok := p.engineJSON(w, out, 16<<20, &n); !ok {
		return
	}
	kept := map[string]json.RawMessage{"Containers": json.RawMessage("{}")}
	for _, f := range networkFields {
		if v, ok := n[f]; ok {
			kept[f] = v
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(kept)
}

// serveImageList answers an image list with the environment images alone (the engine was asked
// for them by label; this holds whatever the engine made of the client's other filters), each
// with only its environment tags: another name someone gave the same image is theirs.
func (p *Proxy) serveImageList(w http.ResponseWriter, out *http.Request) {
	var list []map[string]json.RawMessage
	if _, ok := p.engineJSON(w, out, 64<<20, &list); !ok {
		return
	}
	kept := make([]map[string]json.RawMessage, 0, len(list))
	for _, img := range list {
		var labels map[string]string
		if json.Unmarshal(img["Labels"], &labels) != nil || labels[envpkg.LabelEnv] != "1" {
			continue
		}
		keepRefs(img, "")
		kept = append(kept, img)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(kept)
}

// serveImageInspect answers an image inspect with, of the image's tags and digests, only the
// name the client asked for and environment tags: the image's other names are whoever gave
// them. The image itself is the client's to know: it could run it.
func (p *Proxy) serveImageInspect(w http.ResponseWriter, out *http.Request, asked string) {
	var img map[string]json.RawMessage
	if _, ok := p.engineJSON(w, out, 16<<20, &img); !ok {
		return
	}
	keepRefs(img, asked)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(img)
}

// keepRefs keeps in an image's RepoTags and RepoDigests the references of the environment
// repository and of asked's repository (the tag asked for; any digest of that repository).
func keepRefs(img map[string]json.RawMessage, asked string) {
	var askedName, askedTag string
	if named, err := reference.ParseNormalizedNamed(asked); err == nil {
		askedName = named.Name()
		askedTag = reference.TagNameOnly(named).String()
	}
	for _, field := range []string{"RepoTags", "RepoDigests"} {
		var refs []string
		if json.Unmarshal(img[field], &refs) != nil || refs == nil {
			continue
		}
		keep := []string{}
		for _, r := range refs {
			named, err := reference.ParseNormalizedNamed(r)
			if err != nil {
				continue // "<none>:<none>" and the like name nothing
			}
			_, digested := named.(reference.Digested)
			switch {
			case reference.FamiliarName(named) == envRepo(),
				askedName != "" && named.String() == askedTag,
				digested && named.Name() == askedName:
				keep = append(keep, r)
			}
		}
		img[field], _ = json.Marshal(keep)
	}
}

// serveCreate forwards a container create and passes its answer on, but for a name already in
// use: the engine's answer names the container that holds it, which may be another workload's.
func (p *Proxy) serveCreate(w http.ResponseWriter, out *http.Request, name string) {
	resp, err := p.client.Transport.RoundTrip(out)
	if err != nil {
		writeError(w, http.StatusBadGateway, "frognano docker-proxy: the Docker engine did not answer: "+err.Error())
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusConflict {
		writeError(w, http.StatusConflict, fmt.Sprintf("Conflict. The container name %q is already in use.", "/"+trimSlash(name)))
		return
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

func trimSlash(s string) string {
	if len(s) > 0 && s[0] == '/' {
		return s[1:]
	}
	return s
}
