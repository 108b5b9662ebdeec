package server

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkWebhook sends signed issues.labeled deliveries, each for a new
// issue, through the real handler to a committed run and River job (real
// PostgreSQL, in-process). It reports deliveries/s and the p99 latency.
func BenchmarkWebhook(b *testing.B) {
	bb := setup(b)
	template := labeled(b, issueNumber(999999999))
	if !bytes.Contains(template, []byte(`"number":999999999`)) {
		b.Fatal("template lacks the issue number placeholder")
	}
	var issue atomic.Int64
	var mu sync.Mutex
	var latencies []time.Duration

	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		local := make([]time.Duration, 0, 1024)
		for pb.Next() {
			n := issue.Add(1)
			body := bytes.Replace(template, []byte(`"number":999999999`), fmt.Appendf(nil, `"number":%d`, n), 1)
			req := httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(body))
			req.Header.Set("X-GitHub-Event", "issues")
			req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("bench-%d", n))
			req.Header.Set("X-GitHub-Hook-ID", "1")
			req.Header.Set("X-Hub-Signature-256", Sign(testSecret, body))
			rec := httptest.NewRecorder()
			start := time.Now()
			bb.srv.ServeHTTP(rec, req)
			local = append(local, time.Since(start))
			if rec.Code != http.StatusOK {
				b.Errorf("status %d: %s", rec.Code, rec.Body.String())
				return
			}
		}
		mu.Lock()
		latencies = append(latencies, local...)
		mu.Unlock()
	})
	b.StopTimer()
	if len(latencies) == 0 {
		return
	}
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1000, "p99_ms")
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50_ms")
}
