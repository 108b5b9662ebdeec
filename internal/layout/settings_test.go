package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// settingRE is the name of a setting: frognano's own, the GitHub App's, the database's.
var settingRE = regexp.MustCompile(`^(FROGNANO_[A-Z0-9_]+|GITHUB_[A-Z0-9_]+|DATABASE_URL)$`)

// processEnv are the packages (or single files) that may touch the process's environment
// (os.Getenv, os.LookupEnv, os.Environ) at all, and why none of them reads a setting there.
// Settings are read by package config alone, through the getenv main hands it.
var processEnv = map[string]string{
	"cmd/frognano/main.go": "hands os.Getenv to run, which passes it to package config",
	"runner/executor":      "runs inside the sandbox (in frognano-executor): the commands' own environment, HOME and the locale, as the reference harness does",
	"githubapp/git.go":     "host git inherits the proxy variables (netEnv), none of them a setting",
	"internal/hostgit":     "host git inherits PATH and TMPDIR (passEnv), none of them a setting",
	"web/webtest":          "for tests only: the tests' browser (testOnlySettings)",
	"migrations/dbtest":    "for tests only: TEST_DATABASE_URL",
	"internal/buildtest":   "for tests only: go build's environment",
	"githubapp/githubtest": "for tests only: the fake GitHub's git gets PATH",
}

// testOnlySettings are the setting-like names a package other than config may read, with why.
var testOnlySettings = map[string]string{
	"FROGNANO_CHROMIUM":       "web/webtest: which browser the tests drive",
	"FROGNANO_TEST_ARTIFACTS": "web/webtest: where the tests' screenshots go",
}

// TestSettingsAreReadInConfig: package config alone reads settings (FROGNANO_*, GITHUB_*,
// DATABASE_URL) from the environment (issue 29). Outside it, in the module's code (test files
// aside: a test may set or read what it likes), no call of a getenv or lookupEnv, os's or a
// function handed in, names a setting, and only the packages of processEnv touch the
// process's environment at all.
func TestSettingsAreReadInConfig(t *testing.T) {
	t.Parallel()
	files := moduleFiles(t)
	consts := stringConsts(files)
	var problems []string
	touched := map[string]bool{}
	for _, f := range files {
		allowed, key := allowedEnv(f.path)
		imports := importNames(f.file)
		ast.Inspect(f.file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && (imports[x.Name] == "os" || imports[x.Name] == "syscall") &&
					(n.Sel.Name == "Getenv" || n.Sel.Name == "LookupEnv" || n.Sel.Name == "Environ") {
					if allowed {
						touched[key] = true
					} else {
						problems = append(problems, f.at(n)+": "+x.Name+"."+n.Sel.Name+" outside package config and the packages of processEnv")
					}
				}
			case *ast.CallExpr:
				if !isEnvRead(n.Fun) || len(n.Args) == 0 || under(f.dir, "config") {
					return true
				}
				name, ok := constString(n.Args[0], f, imports, consts)
				if !ok || !settingRE.MatchString(name) {
					return true
				}
				if _, test := testOnlySettings[name]; test && under(f.dir, "web/webtest") {
					return true
				}
				problems = append(problems, f.at(n)+": reads "+name+" outside package config")
			}
			return true
		})
	}
	for key := range processEnv {
		if !touched[key] {
			problems = append(problems, "processEnv lists "+key+", which no longer touches the environment: remove it")
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

// goFile is one parsed Go file of the module.
type goFile struct {
	path string // from the module's root, slash-separated
	dir  string
	fset *token.FileSet
	file *ast.File
}

func (f goFile) at(n ast.Node) string {
	return f.path + ":" + strconv.Itoa(f.fset.Position(n.Pos()).Line)
}

// moduleFiles parses the module's Go files, test files and testdata aside.
func moduleFiles(t *testing.T) []goFile {
	t.Helper()
	root := "../.."
	fset := token.NewFileSet()
	var out []goFile
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && path != root && (strings.HasPrefix(e.Name(), ".") || e.Name() == "testdata") {
			return filepath.SkipDir
		}
		if e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		out = append(out, goFile{path: rel, dir: filepath.ToSlash(filepath.Dir(rel)), fset: fset, file: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 100 {
		t.Fatalf("parsed %d Go files; the module has more", len(out))
	}
	return out
}

// allowedEnv says whether the file may touch the process's environment, and under which key
// of processEnv.
func allowedEnv(path string) (bool, string) {
	if _, ok := processEnv[path]; ok {
		return true, path
	}
	for key := range processEnv {
		if !strings.HasSuffix(key, ".go") && under(filepath.ToSlash(filepath.Dir(path)), key) {
			return true, key
		}
	}
	return false, ""
}

// importNames maps the names a file's imports go by to their paths.
func importNames(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		m[name] = p
	}
	return m
}

// isEnvRead reports whether a call's function is a getenv of any kind: os.Getenv,
// os.LookupEnv, a getenv or lookupEnv handed in, a method of that name.
func isEnvRead(fun ast.Expr) bool {
	var name string
	switch f := fun.(type) {
	case *ast.Ident:
		name = f.Name
	case *ast.SelectorExpr:
		name = f.Sel.Name
	default:
		return false
	}
	name = strings.ToLower(name)
	return name == "getenv" || name == "lookupenv"
}

// stringConsts are the module's string constants, by package folder and name.
func stringConsts(files []goFile) map[string]string {
	m := map[string]string{}
	for _, f := range files {
		for _, d := range f.file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							if v, err := strconv.Unquote(lit.Value); err == nil {
								m[f.dir+"."+n.Name] = v
							}
						}
					}
				}
			}
		}
	}
	return m
}

// constString is the string an argument names: a literal, or a constant of the file's package
// or of a package of the module it imports.
func constString(arg ast.Expr, f goFile, imports map[string]string, consts map[string]string) (string, bool) {
	switch a := arg.(type) {
	case *ast.BasicLit:
		if a.Kind != token.STRING {
			return "", false
		}
		v, err := strconv.Unquote(a.Value)
		return v, err == nil
	case *ast.Ident:
		v, ok := consts[f.dir+"."+a.Name]
		return v, ok
	case *ast.SelectorExpr:
		x, ok := a.X.(*ast.Ident)
		if !ok {
			return "", false
		}
		dir := rel(imports[x.Name])
		if dir == "" {
			return "", false
		}
		v, ok := consts[dir+"."+a.Sel.Name]
		return v, ok
	}
	return "", false
}
