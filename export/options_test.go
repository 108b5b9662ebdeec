package export_test

import (
	"testing"
	"time"

	"github.com/frognano/frognano/export"
)

func TestParseSince(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{in: "2026-01-31", want: time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)},
		{in: "2026-01-31T10:00:00+02:00", want: time.Date(2026, 1, 31, 8, 0, 0, 0, time.UTC)},
		{in: "72h", want: now.Add(-72 * time.Hour)},
		{in: "30d", want: now.AddDate(0, 0, -30)},
		{in: "0d", want: now},
		{in: "last week", bad: true},
		{in: "-3d", bad: true},
		{in: "-1h", bad: true},
		{in: "", bad: true},
	} {
		got, err := export.ParseSince(tt.in, now)
		if tt.bad != (err != nil) || (!tt.bad && !got.Equal(tt.want)) {
			t.Errorf("ParseSince(%q) = %v, %v; want %v (bad: %v)", tt.in, got, err, tt.want, tt.bad)
		}
	}
}

func TestParseRepo(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in  string
		ok  bool
		out string
	}{
		{"octo/pager", true, "octo/pager"},
		{" Octo/my.repo_1-x ", true, "Octo/my.repo_1-x"},
		{"octo", false, ""},
		{"octo/pager/x", false, ""},
		{"/pager", false, ""},
		{"octo/", false, ""},
		{"octo/pa ger", false, ""},
		{"octo/*", false, ""},
	} {
		r, err := export.ParseRepo(tt.in)
		if tt.ok != (err == nil) || (tt.ok && r.String() != tt.out) {
			t.Errorf("ParseRepo(%q) = %v, %v", tt.in, r, err)
		}
	}
}
