package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"github.com/frognano/frognano/api"
	"github.com/frognano/frognano/config"
)

// issueRef is OWNER/REPO#N.
var issueRef = regexp.MustCompile(`^([^/#\s]+/[^/#\s]+)#([0-9]{1,10})$`)

// runsStartCmd is `frognano runs start OWNER/REPO#N [--base B] [--attempts N] [--model M]
// [--instructions TEXT]`: it asks for a run through the service's API (FROGNANO_API_URL, with
// the token FROGNANO_API_TOKEN), so that the terminal is held to the token's scope and every
// check the API makes, and prints the run's id and page.
func runsStartCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{"frognano runs start needs OWNER/REPO#N"}
	}
	m := issueRef.FindStringSubmatch(args[0])
	if m == nil {
		return usageError{fmt.Sprintf("%q is not OWNER/REPO#N", args[0])}
	}
	issue, err := strconv.Atoi(m[2])
	if err != nil || issue <= 0 {
		return usageError{fmt.Sprintf("%q is not an issue number", m[2])}
	}
	req := api.StartRequest{Repository: m[1], Issue: issue}
	fs := newFlagSet("runs start", stderr)
	fs.StringVar(&req.Base, "base", "", "the branch the pull request targets (default: the repository's default branch)")
	fs.IntVar(&req.Attempts, "attempts", 0, "agent attempts (default: the repository's, or the operator's)")
	fs.StringVar(&req.Model, "model", "", "the operator's name of the model to use")
	fs.StringVar(&req.Instructions, "instructions", "", "your instructions, added to the task after the issue")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if err := req.Options.Check(); err != nil {
		return usageError{err.Error()}
	}
	baseURL, token, err := config.APIClient(getenv)
	if err != nil {
		return usageError{err.Error()}
	}
	c := &api.Client{BaseURL: baseURL, Token: token}
	ans, err := c.Start(ctx, req)
	var ae *api.AnswerError
	if errors.As(err, &ae) && ae.RunID != 0 {
		return fmt.Errorf("%s#%d already has an active run: run %d %s", req.Repository, req.Issue, ae.RunID, ae.URL)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "run %d %s %s\n", ans.ID, ans.State, ans.URL)
	return err
}
