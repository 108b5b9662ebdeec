package env

import (
	"fmt"
	"path"
	"strings"
)

// ImageMap is the operator's choice of base sandbox image per repository
// (FROGNANO_SANDBOX_IMAGES): rules tried in order, the first whose pattern matches wins. A
// repository never picks an image itself: it can only add to the operator's image through its
// setup script.
type ImageMap []ImageRule

// ImageRule maps repositories matching Pattern to Image.
type ImageRule struct {
	// Pattern is "owner/name", "owner/*" or "*", compared case-insensitively as GitHub
	// compares names; path.Match wildcards are allowed in each half.
	Pattern string
	Image   string
}

// ParseImageMap reads "PATTERN=IMAGE,PATTERN=IMAGE,...", e.g.
// "acme/api=frognano-sandbox-go:1.26,acme/*=frognano-sandbox-node:22". Spaces around entries
// are ignored; an empty string is an empty map.
func ParseImageMap(s string) (ImageMap, error) {
	var m ImageMap
	for _, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		pat, img, ok := strings.Cut(entry, "=")
		pat, img = strings.ToLower(strings.TrimSpace(pat)), strings.TrimSpace(img)
		if !ok || pat == "" || img == "" {
			return nil, fmt.Errorf("image map entry %q: want OWNER/NAME=IMAGE", entry)
		}
		if pat != "*" {
			owner, name, ok := strings.Cut(pat, "/")
			if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
				return nil, fmt.Errorf("image map entry %q: the pattern must be OWNER/NAME, OWNER/* or *", entry)
			}
		}
		if _, err := path.Match(pat, ""); err != nil {
			return nil, fmt.Errorf("image map entry %q: %v", entry, err)
		}
		if strings.ContainsAny(img, " \t\n") {
			return nil, fmt.Errorf("image map entry %q: the image name holds a space", entry)
		}
		m = append(m, ImageRule{Pattern: pat, Image: img})
	}
	return m, nil
}

// For returns the image of the first rule matching repo ("owner/name"), or def when none
// does (or repo is empty, as for `frognano run`).
func (m ImageMap) For(repo, def string) string {
	repo = strings.ToLower(repo)
	if repo == "" {
		return def
	}
	for _, r := range m {
		if ok, _ := path.Match(r.Pattern, repo); ok || r.Pattern == "*" {
			return r.Image
		}
	}
	return def
}

// Images returns every image the map names, each once, in order.
func (m ImageMap) Images() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range m {
		if !seen[r.Image] {
			seen[r.Image] = true
			out = append(out, r.Image)
		}
	}
	return out
}
