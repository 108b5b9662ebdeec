package main

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

const svcAdminToken = "admin-token-for-the-metrics-test-0123"

// TestServiceMetricsAndRiverUI runs one scripted issue through a real `frognano serve` with
// FROGNANO_METRICS_ADDR and FROGNANO_ADMIN_TOKEN, then scrapes /metrics and asserts that the
// counters and histograms moved as the run did; River's UI answers only with the token, and
// neither is served on the public port.
func TestServiceMetricsAndRiverUI(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-pyaverage.json")
	e.env["FROGNANO_METRICS_ADDR"] = "127.0.0.1:0"
	e.env["FROGNANO_ADMIN_TOKEN"] = svcAdminToken
	p := e.start()
	admin := svcAdminAddr(t, e)

	before := svcScrape(t, admin)
	if v := svcMetric(t, before, `frognano_run_duration_seconds_count`); v != 0 {
		t.Errorf("run_duration_seconds_count = %v before any run", v)
	}
	row := e.waitState(e.queueRun(p), svcRunWait, "succeeded")

	text := svcScrape(t, admin)
	modelCalls := float64(len(e.model.Requests()))
	for series, want := range map[string]float64{
		`frognano_webhook_deliveries_total{event="issues",outcome="queued"}`:                   1,
		`frognano_runs{state="succeeded"}`:                                                     1,
		`frognano_runs{state="running"}`:                                                       0,
		`frognano_runs_finished_total{exit_reason="` + row.ExitReason + `",state="succeeded"}`: 1,
		`frognano_run_duration_seconds_count`:                                                  1,
		`frognano_run_phase_seconds_count{phase="model"}`:                                      1,
		`frognano_run_phase_seconds_count{phase="tests"}`:                                      1,
		`frognano_run_steps_sum`:                                                               float64(row.Steps),
		`frognano_run_steps_count`:                                                             1,
		`frognano_model_requests_total{outcome="ok"}`:                                          modelCalls,
		`frognano_model_request_seconds_count{outcome="ok"}`:                                   modelCalls,
		`frognano_database_up`:                                                                 1,
	} {
		if got := svcMetric(t, text, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	if v := svcMetric(t, text, `frognano_github_requests_total{outcome="ok"}`); v < 5 {
		t.Errorf("github_requests_total{ok} = %v, want the run's requests (at least 5)", v)
	}
	// The agent's sandbox and the two test sandboxes.
	if v := svcMetric(t, text, `frognano_sandbox_ready_seconds_count`); v < 3 {
		t.Errorf("sandbox_ready_seconds_count = %v, want the run's 3 sandboxes", v)
	}
	if v := svcMetric(t, text, `frognano_run_tokens_sum{kind="prompt"}`); v <= 0 {
		t.Errorf("run_tokens_sum{prompt} = %v, want the run's prompt tokens", v)
	}
	if v := svcMetric(t, text, `frognano_run_duration_seconds_sum`); v <= 0 {
		t.Errorf("run_duration_seconds_sum = %v", v)
	}
	if !regexp.MustCompile(`(?m)^frognano_river_jobs\{state="completed"\} [1-9]`).MatchString(text) {
		t.Errorf("river_jobs{completed} did not count the finished job")
	}
	if strings.Contains(text, e.secret) || strings.Contains(text, svcAdminToken) {
		t.Errorf("/metrics shows a secret")
	}

	t.Run("RiverUIOnlyWithToken", func(t *testing.T) {
		get := func(url, token string) (int, string) {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			if token != "" {
				req.SetBasicAuth("operator", token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		if code, _ := get("http://"+admin+"/riverui/", ""); code != http.StatusUnauthorized {
			t.Errorf("/riverui/ without the token: %d, want 401", code)
		}
		if code, _ := get("http://"+admin+"/riverui/api/jobs?state=completed", "wrong-token-wrong-token"); code != http.StatusUnauthorized {
			t.Errorf("River's API with a wrong token: %d, want 401", code)
		}
		if code, body := get("http://"+admin+"/riverui/", svcAdminToken); code != http.StatusOK || !strings.Contains(body, "<html") {
			t.Errorf("/riverui/ with the token: %d %s", code, svcTail(body, 200))
		}
		code, body := get("http://"+admin+"/riverui/api/jobs?state=completed", svcAdminToken)
		var jobs struct {
			Data []struct {
				Kind string `json:"kind"`
			} `json:"data"`
		}
		if code != http.StatusOK || json.Unmarshal([]byte(body), &jobs) != nil || len(jobs.Data) == 0 || jobs.Data[0].Kind == "" {
			t.Errorf("River's job list with the token: %d %s", code, svcTail(body, 300))
		}
		// Neither is on the public port.
		for _, path := range []string{"/metrics", "/riverui/"} {
			if code, _ := get("http://"+p.addr+path, svcAdminToken); code != http.StatusNotFound && code != http.StatusMethodNotAllowed {
				t.Errorf("public port serves %s: %d", path, code)
			}
		}
	})
}

// svcAdminAddr reads the admin listener's address from the service's log.
func svcAdminAddr(t *testing.T, e *svcEnv) string {
	t.Helper()
	var addr string
	svcWait(t, 30*time.Second, "the metrics listener", func() (bool, string) {
		for _, line := range strings.Split(e.logs.String(), "\n") {
			var l struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "metrics listening" {
				addr = l.Addr
				return true, ""
			}
		}
		return false, "no 'metrics listening' line"
	})
	return addr
}

func svcScrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	return string(b)
}

// svcMetric returns the value of one series in the exposition text; the test fails when the
// series is missing.
func svcMetric(t *testing.T, text, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				t.Fatalf("%s: %v", series, err)
			}
			return v
		}
	}
	t.Errorf("series %s is missing from /metrics", series)
	return -1
}
