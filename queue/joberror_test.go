package queue

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/secrettest"
)

// TestJobErrorPassesGitleaksRules: the text River stores of a failed job's error (its
// river_job.errors row) passes gitleaks' rules as the run's stored error does (run.settle,
// githubapp.RedactRun): an AWS key an error quotes is not kept in clear. It was before the
// review of 2026-12-07 (GitHub's token forms only).
func TestJobErrorPassesGitleaksRules(t *testing.T) {
	key := secrettest.AWSKey(t)
	err := redactJobError(context.Background(), nil, func(context.Context) error {
		return errors.New("running the tests: aws_access_key_id=" + key)
	})
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), key) {
		t.Errorf("the job's stored error holds the AWS key in clear: %q", err.Error())
	}
}
