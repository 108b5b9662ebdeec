package queue

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// publishClock is the fake repository with the time each issue's pull request was published.
type publishClock struct {
	*runtest.Repo
	mu   sync.Mutex
	at   map[int]time.Time
	done chan struct{} // one send per publish
}

func (p *publishClock) Publish(ctx context.Context, in githubapp.PublishInput) (githubapp.Published, error) {
	pub, err := p.Repo.Publish(ctx, in)
	p.mu.Lock()
	p.at[in.IssueNumber] = time.Now()
	p.mu.Unlock()
	p.done <- struct{}{}
	return pub, err
}

// BenchmarkLabelToPR measures label to pull request for issues of one installation, through
// the real River clients and PostgreSQL, with an agent of fixed duration, against the ideal
// work-conserving schedule (the k-th issue's pull request after ceil(k / limit) agent times):
// the issue 20 case (16 issues, 6 at once, 13 s each) scaled to 1.3 s per agent. Two worker
// processes of 8 share the database, so workers never bound it: only the installation's limit
// does. Metrics: the median and p90 of label to PR, the ideal's, and their ratios (goal:
// within 1.2).
func BenchmarkLabelToPR(b *testing.B) {
	const issues, limit = 16, 6
	const agent = 1300 * time.Millisecond
	var medians, p90s []time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		bb := setup(b)
		clock := &publishClock{Repo: bb.repo, at: map[int]time.Time{}, done: make(chan struct{}, issues)}
		bb.runner.Set(func(ctx context.Context, _ run.RunSpec, _ func(run.Progress)) (*run.Outcome, error) {
			select {
			case <-time.After(agent): // the agent's fixed duration
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return runtest.GoodOutcome(), nil
		})
		for w := 0; w < 2; w++ {
			c, err := NewClient(bb.pool, Config{Workers: 8, PerInstallationLimit: limit, GitHub: runtest.GitHubOf(clock), Runner: bb.runner,
				StatusEditInterval: -1, SoftStopTimeout: time.Second, WorkDir: b.TempDir(), Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			if err := c.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_ = c.Stop(ctx)
			}()
		}
		b.StartTimer()
		labelled := map[int]time.Time{}
		for k := 1; k <= issues; k++ {
			labelled[k] = time.Now()
			if _, err := bb.client.Accept(context.Background(), bb.delivery("issues", "labeled"), request(k)); err != nil {
				b.Fatal(err)
			}
		}
		for k := 0; k < issues; k++ {
			select {
			case <-clock.done:
			case <-time.After(5 * time.Minute):
				b.Fatalf("%d of %d pull requests after 5 minutes", k, issues)
			}
		}
		b.StopTimer()
		var took []time.Duration
		clock.mu.Lock()
		for k, at := range clock.at {
			took = append(took, at.Sub(labelled[k]))
		}
		clock.mu.Unlock()
		slices.Sort(took)
		medians = append(medians, took[len(took)/2])
		p90s = append(p90s, took[len(took)*9/10])
	}
	ideal := make([]time.Duration, issues)
	for k := range ideal {
		ideal[k] = time.Duration(k/limit+1) * agent
	}
	median, p90 := slices.Max(medians), slices.Max(p90s) // the worst iteration
	b.ReportMetric(median.Seconds(), "median_s")
	b.ReportMetric(p90.Seconds(), "p90_s")
	b.ReportMetric(ideal[issues/2].Seconds(), "ideal_median_s")
	b.ReportMetric(ideal[issues*9/10].Seconds(), "ideal_p90_s")
	b.ReportMetric(float64(median)/float64(ideal[issues/2]), "median_x_ideal")
	b.ReportMetric(float64(p90)/float64(ideal[issues*9/10]), "p90_x_ideal")
}
