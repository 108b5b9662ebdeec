package auth

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// BenchmarkCanReadCached is a read check answered from the cache: what every run in a /runs
// listing costs once the person's repositories have been checked.
func BenchmarkCanReadCached(b *testing.B) {
	now := time.Now()
	o := &OAuth{
		cfg:     Config{Now: func() time.Time { return now }, ReadCacheTTL: time.Hour},
		reads:   newExpiring[bool](DefaultReadCacheSize),
		revoked: newExpiring[struct{}](DefaultReadCacheSize),
	}
	v := Viewer{Login: "alice", Token: "ghu_0123456789abcdefghijklmnopqrstuvwxyz"}
	o.reads.put(readKey(tokenKey(v.Token), 1296269), true, now.Add(time.Hour), now)
	ctx := context.Background()
	for b.Loop() {
		if ok, err := o.CanRead(ctx, v, 1296269); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkCacheFull is an insert into a full cache, which evicts one entry.
func BenchmarkCacheFull(b *testing.B) {
	now := time.Now()
	c := newExpiring[bool](DefaultReadCacheSize)
	for i := range DefaultReadCacheSize {
		c.put(strconv.Itoa(i), true, now.Add(time.Duration(i)*time.Millisecond+time.Hour), now)
	}
	i := 0
	for b.Loop() {
		i++
		c.put("new"+strconv.Itoa(i), true, now.Add(2*time.Hour), now)
	}
	if c.len() > DefaultReadCacheSize {
		b.Fatalf("cache holds %d", c.len())
	}
}
