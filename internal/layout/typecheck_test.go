package layout

// The type checker of the text scan (textscan_test.go): the scanned packages are checked from
// their source, every other package is read from the export data of the build (go list
// -export), so that the scan sees the same objects the compiler does.

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// tpkg is one scanned package: its source, type-checked.
type tpkg struct {
	path  string
	files []*ast.File
	name  map[*ast.File]string // file name, relative to the module
	pkg   *types.Package
	info  *types.Info
}

// loader type-checks scanned packages from source and reads every other package from the
// export data go list gives.
type loader struct {
	fset    *token.FileSet
	exports map[string]string // import path -> export data file
	gc      types.Importer
	src     map[string]map[string]any // scanned package path -> file name -> source (nil: the file on disk)
	disk    map[string]string         // file name -> path on disk
	done    map[string]*tpkg
	order   []*tpkg
}

// exportsOf runs go list in dir for the export data of pkgs and everything they import.
func exportsOf(t *testing.T, dir string, pkgs ...string) map[string]string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}, pkgs...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.String())
	}
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, "\t"); ok && file != "" {
			m[path] = file
		}
	}
	return m
}

func newLoader(exports map[string]string) *loader {
	l := &loader{fset: token.NewFileSet(), exports: exports, src: map[string]map[string]any{}, disk: map[string]string{}, done: map[string]*tpkg{}}
	l.gc = importer.ForCompiler(l.fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := l.exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	return l
}

// addDir makes package path (folder dir of the module at root) a scanned one.
func (l *loader) addDir(root, dir, path string) error {
	names, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
	if err != nil {
		return err
	}
	files := map[string]any{}
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		rel := filepath.ToSlash(filepath.Join(dir, filepath.Base(n)))
		files[rel] = nil
		l.disk[rel] = n
	}
	if len(files) == 0 {
		return fmt.Errorf("no Go file in %s", dir)
	}
	l.src[path] = files
	return nil
}

func (l *loader) Import(path string) (*types.Package, error) {
	if _, ok := l.src[path]; ok {
		p, err := l.check(path)
		if err != nil {
			return nil, err
		}
		return p.pkg, nil
	}
	return l.gc.Import(path)
}

// check type-checks scanned package path (once).
func (l *loader) check(path string) (*tpkg, error) {
	if p, ok := l.done[path]; ok {
		if p == nil {
			return nil, fmt.Errorf("import cycle through %s", path)
		}
		return p, nil
	}
	l.done[path] = nil
	p := &tpkg{path: path, name: map[*ast.File]string{}}
	var names []string
	for n := range l.src[path] {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		filename, src := l.disk[n], l.src[path][n]
		if src != nil {
			filename = n
		}
		f, err := parser.ParseFile(l.fset, filename, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		p.files = append(p.files, f)
		p.name[f] = n
	}
	p.info = &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{},
		Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	var err error
	p.pkg, err = (&types.Config{Importer: l}).Check(path, l.fset, p.files, p.info)
	if err != nil {
		return nil, fmt.Errorf("type-checking %s: %w", path, err)
	}
	l.done[path] = p
	l.order = append(l.order, p)
	return p, nil
}
