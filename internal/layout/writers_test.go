package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// writers names, for each table that has one writer, the files of the module that may hold SQL
// writing it (patterns of filepath.Match, relative to the module's root). One owner for each
// table: the package that owns a row exposes named methods, and is the only place with SQL that
// writes it.
var writers = map[string][]string{
	// run's Store: the pipeline's writes, the ends and outboxes, and those the queue makes in
	// transactions of its own, through methods that take its pgx.Tx.
	"runs": {"run/store.go", "run/store_*.go"},
	// `frognano budget set|clear`, through run.Store.SetBudget and ClearBudget.
	"budgets": {"run/usage_report.go"},
	// every write frognano made on GitHub for a run, through run.Store.RecordAudit.
	"run_audit": {"run/audit.go"},
	// `frognano tokens` and the API's authentication, through api.Tokens.
	"api_tokens": {"api/tokens.go"},
	// invalid settings files and the comment that named their problems, through run.Store's
	// settingsError* methods.
	"settings_errors": {"run/store_settings.go"},
	// what became of each pull request a run published to (issue 31), through outcome.Store.
	"pull_outcomes": {"outcome/store.go", "outcome/store_*.go"},
	// the trigger label each repository's settings name, through run.Store's recordLabel.
	"repo_labels": {"run/store_settings.go"},
}

// tableWrite finds SQL that writes one of the tables of writers, whatever its case, spacing
// or line breaks, quoted or not, schema-qualified or not.
var tableWrite = regexp.MustCompile(`(?is)\b(insert\s+into|update|delete\s+from|merge\s+into|truncate(?:\s+table)?)\s+` +
	`(?:only\s+)?(?:"?public"?\s*\.\s*)?"?(runs|budgets|run_audit|api_tokens|settings_errors|pull_outcomes|repo_labels)\b"?`)

// sqlWrite is one statement writing a table, found in a file.
type sqlWrite struct {
	file, table, verb string
	line              int
}

// writesIn returns the writes of writers' tables held in the string constants of the module's
// Go files: each chain of string literals joined by + is read as one text (whatever is not a
// literal stands as a space), so a statement split over several literals is still seen, as is
// a multi-line raw string. Test files (_test.go) and the test-support packages (a folder named
// *test, such as githubtest or dbtest, imported by tests only) are left out: a test's fixture
// writes rows as it likes. testdata holds other modules' code, not this one's.
func writesIn(t *testing.T, root string) []sqlWrite {
	t.Helper()
	var found []sqlWrite
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasSuffix(name, "test")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		ast.Inspect(f, func(n ast.Node) bool {
			e, ok := n.(ast.Expr)
			if !ok {
				return true
			}
			text, ok := joined(e)
			if !ok {
				return true
			}
			for _, m := range tableWrite.FindAllStringSubmatch(text, -1) {
				found = append(found, sqlWrite{file: rel, table: strings.ToLower(m[2]),
					verb: strings.ToUpper(strings.Join(strings.Fields(m[1]), " ")), line: fset.Position(e.Pos()).Line})
			}
			return false // the chain is read whole: its parts are not read again
		})
		return nil
	})
	if err != nil {
		t.Fatalf("reading the module's Go files: %v", err)
	}
	return found
}

// joined is the text of a string literal, or of a chain of operands joined by + that holds
// one; ok is false for any other expression.
func joined(e ast.Expr) (text string, ok bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.ParenExpr:
		return joined(e.X)
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		x, xok := joined(e.X)
		y, yok := joined(e.Y)
		if !xok && !yok {
			return "", false
		}
		return x + " " + y, true
	}
	return "", false
}

// TestOneWriterPerTable checks that SQL writing runs appears only in run's Store, and that the
// budgets and run_audit tables keep their one writer each.
func TestOneWriterPerTable(t *testing.T) {
	t.Parallel()
	writes := writesIn(t, "../..")
	sort.Slice(writes, func(i, j int) bool {
		if writes[i].file != writes[j].file {
			return writes[i].file < writes[j].file
		}
		return writes[i].line < writes[j].line
	})
	allowed := func(table, file string) bool {
		for _, pattern := range writers[table] {
			if ok, _ := filepath.Match(pattern, file); ok {
				return true
			}
		}
		return false
	}
	seen := map[string]int{}
	var problems []string
	for _, w := range writes {
		if allowed(w.table, w.file) {
			seen[w.table]++
			continue
		}
		problems = append(problems, w.file+":"+strconv.Itoa(w.line)+": "+w.verb+" "+w.table+": only "+
			strings.Join(writers[w.table], ", ")+" may write "+w.table+"; call a named method of its owner instead")
	}
	for _, p := range problems {
		t.Error(p)
	}
	// The rule is not vacuous: each owner holds the writes of its table.
	for table := range writers {
		if seen[table] == 0 {
			t.Errorf("no write of %s found in %s: the owner moved or the search no longer sees it; update the rule", table, strings.Join(writers[table], ", "))
		}
	}
}

// TestWritesInSeesWhatItMustSee guards the search itself on a module of its own: a write in
// any case, split over lines or over literals joined by +, quoted or schema-qualified is seen;
// reads, comments, other tables, test files and test-support packages are not.
func TestWritesInSeesWhatItMustSee(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := map[string]string{
		"queue/a.go":             "package queue\n\nconst a = `WITH r AS (\n\tupdate\n\t\truns SET job_id = $2 WHERE id = $1)\n\tSELECT 1`\n",
		"queue/b.go":             "package queue\n\nvar b = \"INSERT INTO \" + `\"runs\" (id) VALUES ($1)`\n\nvar c = `DELETE FROM public.budgets WHERE installation_id = $1`\n",
		"queue/c.go":             "package queue\n\nfunc f(x string) string { return `UPDATE runs SET error = $1` + x + ` WHERE id = $2` }\n",
		"queue/d.go":             "package queue\n\n// UPDATE runs SET state = 'queued' happens in run's Store.\nconst d = `SELECT id FROM runs WHERE id = $1 FOR UPDATE`\n\nconst e = `UPDATE runs_archive SET x = 1`\n",
		"queue/e_test.go":        "package queue\n\nconst f = `UPDATE runs SET state = 'running'`\n",
		"run/runtest/fixture.go": "package runtest\n\nconst g = `INSERT INTO run_audit (run_id) VALUES (1)`\n",
		"testdata/x/x.go":        "package x\n\nconst h = `TRUNCATE runs`\n",
	}
	for name, text := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, w := range writesIn(t, root) {
		got = append(got, w.file+" "+w.verb+" "+w.table)
	}
	sort.Strings(got)
	want := []string{"queue/a.go UPDATE runs", "queue/b.go DELETE FROM budgets", "queue/b.go INSERT INTO runs", "queue/c.go UPDATE runs"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("writes found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
