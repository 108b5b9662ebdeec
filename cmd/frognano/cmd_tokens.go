package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/frognano/frognano/api"
)

// repeated is a flag that may be given several times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(s string) error { *r = append(*r, s); return nil }

// tokensCmd is `frognano tokens create --name NAME (--installation ID | --repo OWNER/REPO)...`,
// `frognano tokens list` and `frognano tokens revoke ID`: the operator's API tokens
// (docs/api.md), kept in PostgreSQL as hashes. create prints the token once, alone on stdout.
func tokensCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "create" && args[0] != "list" && args[0] != "revoke") {
		return usageError{"frognano tokens needs create, list or revoke (frognano tokens create --name NAME --repo OWNER/REPO)"}
	}
	sub, rest := args[0], args[1:]
	fs := newFlagSet("tokens "+sub, stderr)
	name := fs.String("name", "", "the token's name, shown in the list and in the runs it starts (required)")
	var installations, repos repeated
	fs.Var(&installations, "installation", "an installation whose repositories the token may ask runs of (repeatable)")
	fs.Var(&repos, "repo", "a repository OWNER/REPO the token may ask runs of (repeatable)")
	var id int64
	if sub == "revoke" {
		if len(rest) == 0 {
			return usageError{"frognano tokens revoke needs a token id (frognano tokens list shows them)"}
		}
		n, err := strconv.ParseInt(rest[0], 10, 64)
		if err != nil || n <= 0 {
			return usageError{fmt.Sprintf("token id %q is not a positive number", rest[0])}
		}
		id, rest = n, rest[1:]
	}
	if err := parseFlags(fs, rest); err != nil {
		return err
	}
	var scope api.Scope
	for _, s := range installations {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return usageError{fmt.Sprintf("--installation %q is not an installation id (a positive number)", s)}
		}
		scope.Installations = append(scope.Installations, n)
	}
	scope.Repos = repos
	if sub == "create" {
		if *name == "" {
			return usageError{"frognano tokens create needs --name"}
		}
		if _, err := scope.Check(); err != nil {
			return usageError{err.Error()}
		}
	} else if *name != "" || len(installations) > 0 || len(repos) > 0 {
		return usageError{"--name, --installation and --repo are for frognano tokens create"}
	}
	pool, err := openDatabase(ctx, getenv)
	if err != nil {
		return err
	}
	defer pool.Close()
	tokens := api.NewTokens(pool)
	switch sub {
	case "create":
		tok, secret, err := tokens.Create(ctx, *name, scope)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "token %d %q made, for %s. It is shown once, here; frognano keeps only its hash.\n"+
			"Send it as \"Authorization: Bearer TOKEN\" (or FROGNANO_API_TOKEN for frognano runs start).\n", tok.ID, tok.Name, tok.Scope)
		_, err = fmt.Fprintln(stdout, secret)
		return err
	case "revoke":
		tok, err := tokens.Revoke(ctx, id)
		if errors.Is(err, api.ErrNoToken) {
			return usageError{fmt.Sprintf("there is no token %d", id)}
		}
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "token %d %q revoked at %s; runs it asked for that have not started will not start\n",
			tok.ID, tok.Name, tok.RevokedAt.UTC().Format(time.RFC3339))
		return err
	}
	list, err := tokens.List(ctx)
	if err != nil {
		return err
	}
	return writeTokens(stdout, list)
}

// writeTokens is `frognano tokens list`: never a secret, which is not kept.
func writeTokens(w io.Writer, list []api.Token) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSCOPE\tCREATED\tLAST USED\tREVOKED")
	at := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.UTC().Format(time.RFC3339)
	}
	for _, t := range list {
		created := t.CreatedAt
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Name, t.Scope, at(&created), at(t.LastUsedAt), at(t.RevokedAt))
	}
	return tw.Flush()
}
