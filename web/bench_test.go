package web

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
)

// BenchmarkRunPage renders the page of a finished run of 100 steps (each with a call and a
// 2 KiB observation), read from PostgreSQL: the cost of opening a long run's page.
func BenchmarkRunPage(b *testing.B) {
	bb := setup(b)
	id := bb.seedLongRun(b, 100)
	c := &http.Client{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req, _ := http.NewRequest(http.MethodGet, bb.srv.URL+"/runs/"+itoa(id), nil)
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: "alice"})
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
		b.SetBytes(n)
	}
}

// BenchmarkInert is the cost of making a 64 KiB observation inert (the most an event keeps).
func BenchmarkInert(b *testing.B) {
	s := strings.Repeat("ok  \tgithub.com/octo/pager\t0.01s é\n", 64<<10/40)
	b.SetBytes(int64(len(s)))
	for i := 0; i < b.N; i++ {
		_ = inert(s)
	}
}

func (bb *bundle) seedLongRun(tb testing.TB, steps int) int64 {
	id := bb.run(tb, seedRun{Owner: "octo", Repo: "pager", State: run.StateSucceeded, Patch: samplePatch})
	obs := strings.Repeat("a line of tool output\n", 2<<10/22)
	for i := 0; i < steps; i++ {
		bb.event(tb, id, run.EventStep, step(i, "grep -rn Pages .", obs))
	}
	return id
}
