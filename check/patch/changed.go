package patch

import (
	"context"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
)

// MaxChangedPaths bounds what ChangedPaths returns: each link that reaches a folder holding it (a
// link to "." or to a parent) shows every changed file at one more path, and several such links
// at as many paths as they have orders.
const MaxChangedPaths = 100000

// ChangedPaths applies diff to base in a Scratch and returns, sorted, every path the patched tree
// changes as git built it (`git diff-tree --no-renames`: both sides of a rename, a deleted path,
// a mode change), and every path a checkout shows changed through a symbolic link of the base or
// the patched tree: with the link `deploy -> infra/prod`, a patch that changes
// `infra/prod/app.sh` changes `deploy/app.sh` too, and with `config/prod.yml ->
// ../shared/prod.yml` a change of `shared/prod.yml` changes `config/prod.yml`. A link's target
// is read lexically from its folder; a link to a link is followed by taking the aliases of the
// aliases, at most maxLinkHops times and never through the same link twice (a target outside
// the repository shows nothing of it); a tree whose links would show the changes at more than
// MaxChangedPaths paths is an error, never a shorter list. It is what a rule about paths (a repository's protected_paths) must judge: the diff's names are
// not all the paths a patch changes.
func ChangedPaths(ctx context.Context, git Git, base string, diff []byte) ([]string, error) {
	sc, err := NewScratch(ctx, git, base)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	if len(diff) > 0 {
		if err := sc.Apply(ctx, git, diff); err != nil {
			return nil, err
		}
	}
	out, err := git(ctx, sc.Env, nil, "write-tree")
	if err != nil {
		return nil, fmt.Errorf("writing the patched tree: %w", err)
	}
	tree := strings.TrimSpace(string(out))
	raw, err := git(ctx, sc.Env, nil, "diff-tree", "-r", "-z", "--raw", "--no-renames", "--full-index", base, tree)
	if err != nil {
		return nil, fmt.Errorf("comparing the patched tree with the base: %w", err)
	}
	changes, err := parseRawDiff(raw)
	if err != nil {
		return nil, fmt.Errorf("comparing the patched tree with the base: %w", err)
	}
	changed := make([]string, 0, len(changes))
	for _, c := range changes {
		changed = append(changed, c.Path)
	}
	links := map[string]string{}
	for _, t := range []string{base, tree} {
		l, err := treeLinks(ctx, git, sc.Env, t)
		if err != nil {
			return nil, err
		}
		for p, target := range l {
			links[p] = target
		}
	}
	return linkAliases(changed, links)
}

// linkAliases returns changed with every path that shows one of them through a link of links
// (path → target), sorted.
func linkAliases(changed []string, links map[string]string) ([]string, error) {
	type alias struct{ link, target string } // target: the repository path the link names, "" the root
	var al []alias
	for l, t := range links {
		if strings.HasPrefix(t, "/") || t == "" {
			continue
		}
		j := path.Join(path.Dir(l), t)
		if j == ".." || strings.HasPrefix(j, "../") {
			continue
		}
		if j == "." {
			j = ""
		}
		al = append(al, alias{l, j})
	}
	// via holds, for each path found, the links it was reached through: a chain never takes the
	// same link twice, so a link to a folder that holds it (a cycle) shows each path once through
	// it, not at ever longer paths.
	via := make(map[string][]int, len(changed))
	for _, p := range changed {
		via[p] = nil
	}
	out := append([]string(nil), changed...)
	fresh := changed
	for hop := 0; hop < maxLinkHops && len(fresh) > 0; hop++ {
		var next []string
		for _, p := range fresh {
			for i, a := range al {
				var rest string
				switch {
				case slices.Contains(via[p], i):
					continue
				case a.target == "":
					rest = "/" + p
				case p == a.target:
					rest = ""
				case strings.HasPrefix(p, a.target+"/"):
					rest = p[len(a.target):]
				default:
					continue
				}
				q := a.link + rest
				if _, ok := via[q]; ok || len(q) > maxPathLen {
					continue
				}
				if len(via) >= MaxChangedPaths {
					return nil, fmt.Errorf("the patch changes more than %d paths once the tree's symbolic links are followed", MaxChangedPaths)
				}
				via[q] = append(slices.Clip(via[p]), i)
				out = append(out, q)
				next = append(next, q)
			}
		}
		fresh = next
	}
	sort.Strings(out)
	return out, nil
}
