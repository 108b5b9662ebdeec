package env

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"

	"github.com/frognano/frognano/internal/logging"
)

// Cached is one environment image on the engine.
type Cached struct {
	ID       string
	Ref      string // frognano-env:KEY; empty for an image a rebuild left untagged
	Key      string
	Repo     string
	Tenant   string // whose share of the cache it takes (Scope.Tenant); "" for an image made before scopes
	Base     string // the base image as the operator named it
	Size     int64  // bytes of its own layers (what setup added to the base image)
	Created  time.Time
	LastUsed time.Time
	InUse    int // containers made from it (sandboxes and pins of runs)
}

// List returns the environment images on the engine, least recently used first.
func (m *Manager) List(ctx context.Context) ([]Cached, error) {
	imgs, err := m.docker.ImageList(ctx, image.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", LabelEnv+"=1"))})
	if err != nil {
		return nil, fmt.Errorf("listing environment images: %w", err)
	}
	baseSize := map[string]int64{}
	var out []Cached
	for _, s := range imgs {
		info, err := m.docker.ImageInspect(ctx, s.ID)
		if cerrdefs.IsNotFound(err) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("inspecting environment image %s: %w", s.ID, err)
		}
		c := Cached{ID: s.ID, Key: s.Labels[LabelKey], Repo: s.Labels[LabelRepo], Tenant: s.Labels[LabelTenant], Base: s.Labels[LabelBaseName], Size: info.Size}
		if t, err := time.Parse(time.RFC3339Nano, info.Created); err == nil {
			c.Created = t
		}
		c.LastUsed = info.Metadata.LastTagTime
		if c.LastUsed.IsZero() {
			c.LastUsed = c.Created
		}
		for _, t := range s.RepoTags {
			if t == Ref(c.Key) {
				c.Ref = t
			}
		}
		if b := s.Labels[LabelBaseID]; b != "" {
			size, ok := baseSize[b]
			if !ok {
				if bi, err := m.docker.ImageInspect(ctx, b); err == nil {
					size = bi.Size
				}
				baseSize[b] = size
			}
			if size > 0 && size <= c.Size {
				c.Size -= size
			}
		}
		users, err := m.docker.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("ancestor", s.ID))})
		if err == nil {
			c.InUse = len(users)
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LastUsed.Before(out[j].LastUsed) })
	return out, nil
}

// Evict keeps the environment images within Config.CacheSize. It removes, first, images no
// run can use any more (left untagged by a rebuild, or made before environments had a
// tenant); then, while the rest do not fit, the least recently used image of the tenant that
// holds the most, so that one tenant's builds only ever push out its own environments while it
// holds more than another: an installation cannot evict another's at will by building large
// environments. An image that a container uses (a run's sandbox or pin) is never removed: the
// engine refuses, and Evict moves on. It returns the removed images, and logs each through the
// logger ctx carries (a run's, when a build made room), else the manager's.
func (m *Manager) Evict(ctx context.Context) ([]Cached, error) {
	list, err := m.List(ctx)
	if err != nil {
		return nil, err
	}
	var removed []Cached
	var errs []error
	drop := func(c Cached) bool {
		ok, err := m.remove(ctx, c)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			removed = append(removed, c)
			logging.FromContextOr(ctx, m.log).Info("environment image removed", "image", c.ID, "key", c.Key, "tenant", c.Tenant, "bytes", c.Size)
		}
		return ok
	}
	var total int64
	held := map[string]int64{}          // bytes per tenant
	candidates := map[string][]Cached{} // per tenant, least recently used first
	for _, c := range list {
		if m.fresh(c) {
			total += c.Size
			held[c.Tenant] += c.Size
			continue
		}
		if c.Ref == "" || c.Tenant == "" {
			if drop(c) {
				continue
			}
		}
		total += c.Size
		held[c.Tenant] += c.Size
		candidates[c.Tenant] = append(candidates[c.Tenant], c)
	}
	for total > m.cfg.CacheSize {
		// The tenant holding the most that still has something removable.
		tenant, most := "", int64(-1)
		for t, cs := range candidates {
			if len(cs) > 0 && (held[t] > most || held[t] == most && t < tenant) {
				tenant, most = t, held[t]
			}
		}
		if most < 0 {
			break // everything left is in use or fresh
		}
		c := candidates[tenant][0]
		candidates[tenant] = candidates[tenant][1:]
		if drop(c) {
			total -= c.Size
			held[tenant] -= c.Size
		}
	}
	return removed, errors.Join(errs...)
}

// RemoveUnused removes every environment image no container uses (`frognano sandbox prune
// --environments`).
func (m *Manager) RemoveUnused(ctx context.Context) ([]Cached, error) {
	list, err := m.List(ctx)
	if err != nil {
		return nil, err
	}
	var removed []Cached
	var errs []error
	for _, c := range list {
		if m.fresh(c) {
			continue
		}
		ok, err := m.remove(ctx, c)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			removed = append(removed, c)
		}
	}
	return removed, errors.Join(errs...)
}

// fresh reports whether c is younger than Config.FreshFor: perhaps another process's image
// between its commit and its tag or pin, which a removal would pull from under it.
func (m *Manager) fresh(c Cached) bool {
	return m.cfg.FreshFor > 0 && time.Since(c.Created) < m.cfg.FreshFor
}

// remove removes one environment image unless a container uses it (then it reports false and
// no error).
func (m *Manager) remove(ctx context.Context, c Cached) (bool, error) {
	target := c.Ref
	if target == "" {
		target = c.ID
	}
	_, err := m.docker.ImageRemove(ctx, target, image.RemoveOptions{Force: false, PruneChildren: true})
	switch {
	case err == nil:
		return true, nil
	case cerrdefs.IsConflict(err), cerrdefs.IsNotFound(err):
		return false, nil // in use (or removed by another process meanwhile)
	}
	return false, fmt.Errorf("removing environment image %s: %w", target, err)
}
