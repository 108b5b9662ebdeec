package stats

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// DefaultPeriod is how far back the figures look when no start is given: 90 days, so that a
// pull request has had time to be reviewed and the weeks are a dozen.
const DefaultPeriod = 90 * 24 * time.Hour

// ParseSince reads the start of a period: a UTC date (2026-03-01: from its midnight) or a
// duration back from now (90d, 12w, 36h, 90m: days, weeks, or Go's units); "" is
// DefaultPeriod back from the start of today (UTC).
func ParseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return now.UTC().Truncate(24 * time.Hour).Add(-DefaultPeriod), nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	d, err := parsePeriod(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a date (YYYY-MM-DD) nor a duration (90d, 12w, 36h)", s)
	}
	return now.UTC().Add(-d), nil
}

func parsePeriod(s string) (time.Duration, error) {
	unit := time.Duration(0)
	switch {
	case strings.HasSuffix(s, "d"):
		unit = 24 * time.Hour
	case strings.HasSuffix(s, "w"):
		unit = 7 * 24 * time.Hour
	}
	if unit != 0 {
		n, err := strconv.Atoi(s[:len(s)-1])
		// At most about 100 years: beyond, the product would overflow.
		if err != nil || n <= 0 || n > 36500 {
			return 0, fmt.Errorf("not a number of days or weeks")
		}
		return time.Duration(n) * unit, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("not a positive duration")
	}
	return d, nil
}

// FormatDuration is a time to merge for people: 45m, 5h30m, 3d4h.
func FormatDuration(d time.Duration) string {
	d = d.Round(time.Minute)
	switch {
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		h, m := int(d.Hours()), int(d.Minutes())%60
		if m == 0 {
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh%02dm", h, m)
	}
	days, h := int(d.Hours())/24, int(d.Hours())%24
	if h == 0 {
		return fmt.Sprintf("%dd", days)
	}
	return fmt.Sprintf("%dd%dh", days, h)
}

// Percent is a share for people: 67%, 4.5% under 10%.
func Percent(v float64) string {
	p := v * 100
	if p != 0 && p < 10 {
		return strconv.FormatFloat(p, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(math.Round(p), 'f', 0, 64) + "%"
}

// AcceptanceText is a rate with its interval for people: "67% (30% to 90%), 2 of 3"; "none
// decided" when r is nil.
func AcceptanceText(r *Rate) string {
	if r == nil {
		return "none decided"
	}
	return fmt.Sprintf("%s (%s to %s), %d of %d", Percent(r.Value), Percent(r.Low), Percent(r.High), r.Merged, r.Decided)
}
