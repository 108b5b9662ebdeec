package outcome

import (
	"testing"
	"time"
)

// BenchmarkApplyEvent is what the webhook intake pays per followed pull_request event: one
// transaction that locks the pull request's row (Follows) and applies a synchronize by people
// (ApplyEvent: the row's update and its count of follow-up runs), on a table of 500 pull
// requests whose 1,500 runs (an issue run and two follow-ups each) the count reads.
func BenchmarkApplyEvent(b *testing.B) {
	e := setup(b)
	const prs = 500
	for n := 1; n <= prs; n++ {
		id := e.succeeded("issue", n, "frog-4b", twoLines)
		e.publish(Publication{RunID: id, Number: 1000 + n, Ours: true, Issue: n, Head: sha('a'), Commits: 1})
		for range 2 {
			e.succeeded("followup", 1000+n, "frog-4b", threeLines)
		}
	}
	at := time.Now()
	b.ResetTimer()
	for i := range b.N {
		a, found := e.apply(Event{Action: "synchronize", RepoID: testRepoID, Number: 1000 + 1 + i%prs, Sender: "bob",
			At: at.Add(time.Duration(i) * time.Millisecond), HeadSHA: sha('b' + byte(i%2)), Commits: 2 + i%2})
		if !found || !a.Changed {
			b.Fatalf("event %d: found %v, applied %+v", i, found, a)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
