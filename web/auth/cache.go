package auth

import (
	"sync"
	"time"
)

// expiring is a map whose entries end after a time, bounded in size: when full, expired
// entries go first, then a tenth of the rest. Safe for concurrent use.
type expiring[V any] struct {
	mu      sync.Mutex
	max     int
	entries map[string]entry[V]
}

type entry[V any] struct {
	v   V
	exp time.Time
}

func newExpiring[V any](max int) *expiring[V] {
	return &expiring[V]{max: max, entries: map[string]entry[V]{}}
}

// get returns key's value if it has not expired at now.
func (e *expiring[V]) get(key string, now time.Time) (V, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	en, ok := e.entries[key]
	if !ok || !now.Before(en.exp) {
		delete(e.entries, key)
		var zero V
		return zero, false
	}
	return en.v, true
}

// put sets key to v until exp.
func (e *expiring[V]) put(key string, v V, exp, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.entries[key]; !ok && len(e.entries) >= e.max {
		e.evict(now)
	}
	e.entries[key] = entry[V]{v: v, exp: exp}
}

// update changes key's value with f (from the zero value when absent or expired), keeping an
// existing expiry, else setting exp. It returns the new value.
func (e *expiring[V]) update(key string, f func(V) V, exp, now time.Time) V {
	e.mu.Lock()
	defer e.mu.Unlock()
	en, ok := e.entries[key]
	if !ok || !now.Before(en.exp) {
		if len(e.entries) >= e.max {
			e.evict(now)
		}
		var zero V
		en = entry[V]{v: zero, exp: exp}
	}
	en.v = f(en.v)
	e.entries[key] = en
	return en.v
}

// evict makes room: it drops every expired entry and, if the map is still full, a tenth of
// the entries in map order (no particular ones), so that one O(n) pass serves many inserts.
// Called with mu held.
func (e *expiring[V]) evict(now time.Time) {
	for k, en := range e.entries {
		if !now.Before(en.exp) {
			delete(e.entries, k)
		}
	}
	target := e.max - e.max/10 - 1
	for k := range e.entries {
		if len(e.entries) <= target {
			break
		}
		delete(e.entries, k)
	}
}

// len returns the number of entries held (expired or not).
func (e *expiring[V]) len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.entries)
}
