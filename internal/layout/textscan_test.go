package layout

// textScan follows what GitHub shows a person back to the string literals it is made of, and
// says where each literal with a word in it lies. It type-checks the packages that write to
// GitHub (go/types, their imports read from the build's export data), so every name is
// resolved to the one object it means, and it follows only values of a text type (a string,
// a named string, a slice of them, a function that returns one):
//
//   - the roots are where text leaves for GitHub: the body of every Comment and EditComment
//     call (sinkCalls), and the fields that carry a comment's or a pull request's text
//     (sinkFields) wherever a composite literal or an assignment sets them;
//   - from there it follows local variables to everything assigned to them (and written into
//     them: b.WriteString(x), fmt.Fprintf(&b, x)), constants and package variables to their
//     values, a call of a scanned function to its results with the call's arguments bound
//     to its parameters (an interface method to every method of the scanned packages that
//     implements it), and a function literal to its results. A parameter reached with no call
//     in view makes every call of its function a root, at that argument;
//   - a call into a package it does not scan (fmt, strings, runner) is text made of its
//     arguments: they are followed, the callee's own words are not. The runner's renderers
//     (the pull request body's report, the check run) are its own kind of text.
//
// What it does not see: text that reaches a root through a struct field other than
// sinkFields (the struct's literal is not a root), through a map or slice filled by index
// (m[k] = x), a channel, or reflection. The
// tests below say how much it reaches (every text file, enough roots), so that it cannot go
// blind unnoticed.

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
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// sinkCalls are the methods that post or edit a comment (types.Func.FullName, the module's
// path as "~"): their last argument is the comment's body.
var sinkCalls = []string{
	"(~/run.Repo).Comment", "(~/run.Repo).EditComment",
	"(*~/githubapp.Client).Comment", "(*~/githubapp.Client).EditComment",
}

// sinkFields are the fields whose value GitHub shows, by struct (the module's path as "~"):
// the status comment's view and progress, a run's outcome as the runner gives it and as the
// pipeline keeps it, what Publish writes, and what the runner ends the pull request body with.
var sinkFields = map[string][]string{
	"~/run.Status":             {"Note", "Notices", "Summary"},
	"~/run.Progress":           {"Waiting", "SandboxWait"},
	"~/run.Outcome":            {"PRBody", "Summary", "Headline"},
	"~/run.row":                {"PRBody", "Summary", "Headline"},
	"~/githubapp.PublishInput": {"Title", "Body", "CommitMessage"},
	"~/runner.Fit":             {"Suffix"},
}

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

// fnDecl is the source of a function of a scanned package.
type fnDecl struct {
	decl *ast.FuncDecl
	file *ast.File
	pkg  *tpkg
}

// textScan is one scan over the scanned packages of a loader.
type textScan struct {
	fset   *token.FileSet
	module string
	pkgs   []*tpkg
	isText func(file string) bool
	funcs  map[*types.Func]fnDecl
	values map[types.Object]valueOf // package-level constants and variables
	types  []*types.Named           // the named types of the scanned packages
	calls  map[*types.Func][]callSite
	fields map[*types.Var][]valueOf // what the scanned code sets each field of its structs to
	sinks  map[string]bool          // sinkCalls found

	stray   map[string]string // "file:line: literal" outside the text files -> how it was reached
	reached map[string]int    // literals with a word reached, by file
	roots   int
	trail   []string
	marked  map[paramKey]bool
	seen    map[seenKey]bool
}

type valueOf struct {
	expr ast.Expr
	sc   *scope
}

type paramKey struct {
	fn *types.Func
	i  int
}

type seenKey struct {
	node  ast.Node
	i     int
	chain string
}

// scope is where an expression is read: its package and file, the function declaration it
// is in (nil: package level) and, when that function was entered from a call, the call and
// the caller's scope (its arguments are the parameters' values).
type scope struct {
	pkg  *tpkg
	file *ast.File
	decl *ast.FuncDecl
	fn   *types.Func
	call *ast.CallExpr
	from *scope
}

// chain names the calls that entered sc's function, innermost first.
func (sc *scope) chain() string {
	var b strings.Builder
	for c := sc; c != nil && c.call != nil; c = c.from {
		fmt.Fprintf(&b, "%d,", c.call.Pos())
	}
	return b.String()
}

type callSite struct {
	call *ast.CallExpr
	sc   *scope
}

func newTextScan(l *loader, module string, isText func(string) bool) *textScan {
	s := &textScan{fset: l.fset, module: module, pkgs: l.order, isText: isText, funcs: map[*types.Func]fnDecl{},
		values: map[types.Object]valueOf{}, calls: map[*types.Func][]callSite{}, fields: map[*types.Var][]valueOf{}, sinks: map[string]bool{},
		stray: map[string]string{}, reached: map[string]int{}, marked: map[paramKey]bool{}, seen: map[seenKey]bool{}}
	for _, p := range s.pkgs {
		for _, n := range p.pkg.Scope().Names() {
			if tn, ok := p.pkg.Scope().Lookup(n).(*types.TypeName); ok {
				if named, ok := tn.Type().(*types.Named); ok {
					s.types = append(s.types, named)
				}
			}
		}
		for _, f := range p.files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if fn, ok := p.info.Defs[d.Name].(*types.Func); ok {
						s.funcs[fn] = fnDecl{d, f, p}
					}
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						vs, ok := spec.(*ast.ValueSpec)
						if !ok {
							continue
						}
						for i, id := range vs.Names {
							if i < len(vs.Values) {
								s.values[p.info.Defs[id]] = valueOf{vs.Values[i], &scope{pkg: p, file: f}}
							}
						}
					}
				}
			}
		}
	}
	return s
}

func (s *textScan) short(name string) string { return strings.ReplaceAll(name, s.module, "~") }

// eachFunc calls f with the scope of every function declaration of the scanned packages.
func (s *textScan) eachFunc(f func(sc *scope)) {
	for _, p := range s.pkgs {
		for _, file := range p.files {
			for _, d := range file.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
					fn, _ := p.info.Defs[fd.Name].(*types.Func)
					f(&scope{pkg: p, file: file, decl: fd, fn: fn})
				}
			}
		}
	}
}

// run indexes every call and every field set, then walks every root.
func (s *textScan) run() {
	s.eachFunc(func(sc *scope) {
		info := sc.pkg.info
		ast.Inspect(sc.decl.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				for _, fn := range s.callees(n, sc) {
					s.calls[fn] = append(s.calls[fn], callSite{n, sc})
				}
			case *ast.CompositeLit:
				st, ok := info.TypeOf(n).Underlying().(*types.Struct)
				if !ok {
					break
				}
				for i, el := range n.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						if k, ok := kv.Key.(*ast.Ident); ok {
							if f, ok := info.Uses[k].(*types.Var); ok {
								s.fields[f] = append(s.fields[f], valueOf{kv.Value, sc})
							}
						}
					} else if i < st.NumFields() {
						s.fields[st.Field(i)] = append(s.fields[st.Field(i)], valueOf{el, sc})
					}
				}
			case *ast.AssignStmt:
				for i, lhs := range n.Lhs {
					sel, ok := lhs.(*ast.SelectorExpr)
					if !ok || info.Selections[sel] == nil || info.Selections[sel].Kind() != types.FieldVal {
						continue
					}
					f := info.Selections[sel].Obj().(*types.Var)
					if len(n.Rhs) == len(n.Lhs) {
						s.fields[f] = append(s.fields[f], valueOf{n.Rhs[i], sc})
					}
				}
			}
			return true
		})
	})
	s.eachFunc(func(sc *scope) {
		ast.Inspect(sc.decl.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if fn := s.staticCallee(n, sc); fn != nil && contains(sinkCalls, s.short(fn.FullName())) {
					s.sinks[s.short(fn.FullName())] = true
					s.root(sc, n, fn.Name()+"'s body", func() { s.walk(n.Args[len(n.Args)-1], sc, 0) })
				}
			case *ast.CompositeLit:
				fields := sinkFields[s.short(typeKey(sc.pkg.info.TypeOf(n)))]
				for _, el := range n.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						if k, ok := kv.Key.(*ast.Ident); ok && contains(fields, k.Name) {
							s.root(sc, kv, s.short(typeKey(sc.pkg.info.TypeOf(n)))+"."+k.Name, func() { s.walk(kv.Value, sc, 0) })
						}
					}
				}
			case *ast.AssignStmt:
				for i, lhs := range n.Lhs {
					sel, ok := lhs.(*ast.SelectorExpr)
					if !ok {
						continue
					}
					selection := sc.pkg.info.Selections[sel]
					if selection == nil || selection.Kind() != types.FieldVal ||
						!contains(sinkFields[s.short(typeKey(selection.Recv()))], sel.Sel.Name) {
						continue
					}
					s.root(sc, n, s.short(typeKey(selection.Recv()))+"."+sel.Sel.Name+" =", func() {
						if len(n.Rhs) == len(n.Lhs) {
							s.walk(n.Rhs[i], sc, 0)
						} else if len(n.Rhs) == 1 {
							s.walkResult(n.Rhs[0], sc, i, 0)
						}
					})
				}
			}
			return true
		})
	})
}

// typeKey names a (pointer to a) named type as "path.Name"; "" for any other.
func typeKey(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok && n.Obj().Pkg() != nil {
		return n.Obj().Pkg().Path() + "." + n.Obj().Name()
	}
	return ""
}

// root walks one root (what, at n), with the trail that names it.
func (s *textScan) root(sc *scope, n ast.Node, what string, walk func()) {
	s.roots++
	s.trail = append(s.trail[:0], what+" at "+s.at(sc, n))
	walk()
}

func (s *textScan) at(sc *scope, n ast.Node) string {
	return fmt.Sprintf("%s:%d", sc.pkg.name[sc.file], s.fset.Position(n.Pos()).Line)
}

func contains(list []string, x string) bool {
	for _, y := range list {
		if y == x {
			return true
		}
	}
	return false
}

// textual reports whether a value of type t can carry text: a string (named or not), a
// slice, array or pointer of such, or a function that returns such.
func textual(t types.Type) bool {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		return u.Info()&types.IsString != 0
	case *types.Slice:
		return textual(u.Elem())
	case *types.Array:
		return textual(u.Elem())
	case *types.Pointer:
		return textual(u.Elem())
	case *types.Map:
		return textual(u.Elem())
	case *types.Signature:
		for i := 0; i < u.Results().Len(); i++ {
			if textual(u.Results().At(i).Type()) {
				return true
			}
		}
	case *types.Tuple:
		for i := 0; i < u.Len(); i++ {
			if textual(u.At(i).Type()) {
				return true
			}
		}
	}
	return false
}

// resultType is the type of result i of e.
func resultType(info *types.Info, e ast.Expr, i int) types.Type {
	t := info.TypeOf(e)
	if tup, ok := t.(*types.Tuple); ok {
		if i < tup.Len() {
			return tup.At(i).Type()
		}
		return types.Typ[types.Invalid]
	}
	if t == nil {
		return types.Typ[types.Invalid]
	}
	return t
}

const maxDepth = 80

func (s *textScan) walk(e ast.Expr, sc *scope, depth int) { s.walkResult(e, sc, 0, depth) }

// walkResult follows result i of e (of a call with several results; 0 otherwise) to the
// literals it is made of.
func (s *textScan) walkResult(e ast.Expr, sc *scope, i int, depth int) {
	if e == nil || depth > maxDepth {
		return
	}
	info := sc.pkg.info
	if _, lit := e.(*ast.FuncLit); !lit && !textual(resultType(info, e, i)) {
		return
	}
	// An expression is followed once per chain of calls that entered its function: the same
	// chain binds the same arguments, so a second visit finds nothing new (and a cycle ends).
	key := seenKey{node: e, i: i, chain: sc.chain()}
	if s.seen[key] {
		return
	}
	s.seen[key] = true
	depth++
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			s.literal(e, sc)
		}
	case *ast.Ident:
		s.object(info.Uses[e], sc, depth)
	case *ast.SelectorExpr:
		sel := info.Selections[e]
		switch {
		case sel == nil: // a qualified name: pkg.Name
			s.object(info.Uses[e.Sel], sc, depth)
		case sel.Kind() == types.FieldVal:
			// A field: whatever the scanned code sets it to, anywhere (by field, not by value).
			f := sel.Obj().(*types.Var)
			for _, v := range s.fields[f] {
				s.trail = append(s.trail, fmt.Sprintf("what sets %s (%s)", f.Name(), s.at(v.sc, v.expr)))
				s.walk(v.expr, v.sc, depth)
				s.trail = s.trail[:len(s.trail)-1]
			}
		}
	case *ast.CallExpr:
		s.call(e, sc, i, depth)
	case *ast.BinaryExpr:
		s.walk(e.X, sc, depth)
		s.walk(e.Y, sc, depth)
	case *ast.ParenExpr:
		s.walkResult(e.X, sc, i, depth)
	case *ast.StarExpr:
		s.walk(e.X, sc, depth)
	case *ast.UnaryExpr:
		s.walk(e.X, sc, depth)
	case *ast.IndexExpr:
		s.walk(e.X, sc, depth)
	case *ast.SliceExpr:
		s.walk(e.X, sc, depth)
	case *ast.TypeAssertExpr:
		s.walk(e.X, sc, depth)
	case *ast.CompositeLit:
		for _, el := range e.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				el = kv.Value // a map's or an array's key words nothing
			}
			s.walk(el, sc, depth)
		}
	case *ast.FuncLit:
		s.results(e.Body, i, e.Type, sc, depth)
	}
}

var (
	verb = regexp.MustCompile(`%[-+# 0]*(\d+|\*)?(\.(\d+|\*)?)?[a-zA-Z%]`)
	// name is a setting's or a code's name (GITHUB_APP_PRIVATE_KEY), shown as it is: not wording.
	name = regexp.MustCompile(`^[A-Z][A-Z0-9_]+$`)
)

// notWording are literals that reach GitHub but word nothing, each with why; a literal here
// is exempt wherever it lies.
var notWording = map[string]string{
	`"none"`: "githubapp.Client.Permission: GitHub's name of no permission, shown as a code",
}

// wording reports whether literal l (as written) words something: two letters or more outside
// the format verbs, and either a space or no character of a code (an exit reason max_time, a
// branch frognano/issue-%d, an address): a name is not wording either.
func wording(l string) bool {
	v, err := strconv.Unquote(l)
	if err != nil || name.MatchString(v) || notWording[l] != "" {
		return false
	}
	v = verb.ReplaceAllString(v, "")
	letters := 0
	for _, r := range v {
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return letters >= 2 && (strings.ContainsFunc(v, unicode.IsSpace) || !strings.ContainsAny(v, "_/:$[]=<>@#\\"))
}

// literal records a string literal reached from a root that words something (wording).
func (s *textScan) literal(l *ast.BasicLit, sc *scope) {
	if !wording(l.Value) {
		return
	}
	file := sc.pkg.name[sc.file]
	s.reached[file]++
	if !s.isText(file) {
		k := fmt.Sprintf("%s:%d: %s", file, s.fset.Position(l.Pos()).Line, l.Value)
		if _, ok := s.stray[k]; !ok {
			s.stray[k] = strings.Join(s.trail, " -> ")
		}
	}
}

// object follows what a name refers to: a constant or package variable to its value, a
// parameter to its argument (or every call's), a local variable to what is assigned to it.
func (s *textScan) object(obj types.Object, sc *scope, depth int) {
	switch obj := obj.(type) {
	case *types.Const, *types.Var:
		if v, ok := s.values[obj]; ok {
			s.walk(v.expr, v.sc, depth)
			return
		}
		if sc.decl == nil || obj.Pkg() != sc.pkg.pkg {
			return // a constant of a package not scanned: its words are its own
		}
		if v, ok := obj.(*types.Var); ok && v.IsField() {
			return
		}
		if i, variadic := s.paramIndex(sc, obj); i >= 0 {
			if sc.call != nil {
				for _, a := range argsAt(sc.call, i, variadic) {
					s.walk(a, sc.from, depth)
				}
			} else {
				s.mark(sc.fn, i, variadic, depth)
			}
			return
		}
		s.local(obj, sc, depth)
	}
}

// paramIndex is v's index among the parameters of sc's function (-1: not one), and whether
// it is the variadic one.
func (s *textScan) paramIndex(sc *scope, v types.Object) (int, bool) {
	if sc.fn == nil {
		return -1, false
	}
	sig := sc.fn.Type().(*types.Signature)
	for i := 0; i < sig.Params().Len(); i++ {
		if sig.Params().At(i) == v {
			return i, sig.Variadic() && i == sig.Params().Len()-1
		}
	}
	return -1, false
}

func argsAt(c *ast.CallExpr, i int, variadic bool) []ast.Expr {
	if i >= len(c.Args) {
		return nil
	}
	if variadic && c.Ellipsis == token.NoPos {
		return c.Args[i:]
	}
	return c.Args[i : i+1]
}

// mark makes parameter i of fn a root at every call of fn.
func (s *textScan) mark(fn *types.Func, i int, variadic bool, depth int) {
	if fn == nil || s.marked[paramKey{fn, i}] {
		return
	}
	s.marked[paramKey{fn, i}] = true
	for _, site := range s.calls[fn] {
		s.trail = append(s.trail, fmt.Sprintf("every call of %s (argument %d): %s", fn.Name(), i, s.at(site.sc, site.call)))
		for _, a := range argsAt(site.call, i, variadic) {
			s.walk(a, site.sc, depth)
		}
		s.trail = s.trail[:len(s.trail)-1]
	}
}

// local follows local variable (or constant) v of sc's function: what is assigned to it, what a range
// gives it, and what is written into it (v.Write...(x), f(&v, x)).
func (s *textScan) local(v types.Object, sc *scope, depth int) {
	info := sc.pkg.info
	is := func(e ast.Expr) bool {
		id, ok := e.(*ast.Ident)
		return ok && (info.Defs[id] == v || info.Uses[id] == v)
	}
	ast.Inspect(sc.decl.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				if !is(l) {
					continue
				}
				if len(n.Rhs) == len(n.Lhs) {
					s.walk(n.Rhs[i], sc, depth)
				} else if len(n.Rhs) == 1 {
					s.walkResult(n.Rhs[0], sc, i, depth)
				}
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				if !is(id) {
					continue
				}
				if len(n.Values) == len(n.Names) {
					s.walk(n.Values[i], sc, depth)
				} else if len(n.Values) == 1 {
					s.walkResult(n.Values[0], sc, i, depth)
				}
			}
		case *ast.RangeStmt:
			if n.Value != nil && is(n.Value) {
				s.walk(n.X, sc, depth)
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && is(sel.X) && !textual(info.TypeOf(sel.X)) {
				for _, a := range n.Args {
					s.walk(a, sc, depth)
				}
			}
			for _, a := range n.Args {
				if u, ok := a.(*ast.UnaryExpr); ok && u.Op == token.AND && is(u.X) {
					for _, b := range n.Args {
						if b != a {
							s.walk(b, sc, depth)
						}
					}
				}
			}
		}
		return true
	})
}

// staticCallee is the function or method c calls, when the code names it (nil: a function
// value, a builtin, a conversion).
func (s *textScan) staticCallee(c *ast.CallExpr, sc *scope) *types.Func {
	var id *ast.Ident
	switch f := ast.Unparen(c.Fun).(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	case *ast.IndexExpr: // a generic function, instantiated
		if x, ok := f.X.(*ast.Ident); ok {
			id = x
		}
	}
	if id == nil {
		return nil
	}
	fn, _ := sc.pkg.info.Uses[id].(*types.Func)
	return fn
}

// callees are the scanned functions c may call: its static callee, or, for a method of an
// interface, every method of a scanned type that implements it.
func (s *textScan) callees(c *ast.CallExpr, sc *scope) []*types.Func {
	fn := s.staticCallee(c, sc)
	if fn == nil {
		return nil
	}
	sig := fn.Type().(*types.Signature)
	if sig.Recv() == nil || !types.IsInterface(sig.Recv().Type()) {
		if _, ok := s.funcs[fn]; ok {
			return []*types.Func{fn}
		}
		return nil
	}
	iface, _ := sig.Recv().Type().Underlying().(*types.Interface)
	if iface == nil {
		return nil
	}
	var out []*types.Func
	for _, named := range s.types {
		if types.IsInterface(named) {
			continue
		}
		ptr := types.NewPointer(named)
		if !types.Implements(ptr, iface) {
			continue
		}
		if sel := types.NewMethodSet(ptr).Lookup(fn.Pkg(), fn.Name()); sel != nil {
			if m, ok := sel.Obj().(*types.Func); ok {
				if _, ok := s.funcs[m]; ok {
					out = append(out, m)
				}
			}
		}
	}
	return out
}

// call follows result i of call c: into each scanned callee (its results, with c's
// arguments bound to its parameters), or else into c's arguments (and the text written into
// a method's receiver, a strings.Builder's).
func (s *textScan) call(c *ast.CallExpr, sc *scope, i int, depth int) {
	info := sc.pkg.info
	if tv, ok := info.Types[c.Fun]; ok && tv.IsType() { // a conversion
		s.walk(c.Args[0], sc, depth)
		return
	}
	callees := s.callees(c, sc)
	if len(callees) == 0 {
		if fn := s.staticCallee(c, sc); fn == nil {
			s.walk(c.Fun, sc, depth) // a function value: what it returns
		} else if sel, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr); ok && info.Selections[sel] != nil {
			if id, ok := sel.X.(*ast.Ident); ok {
				if v, ok := info.Uses[id].(*types.Var); ok && !textual(v.Type()) && !v.IsField() && sc.decl != nil {
					s.local(v, sc, depth) // what was written into it: b.WriteString(x), then b.String()
				}
			}
			s.walk(sel.X, sc, depth)
		}
		for _, a := range c.Args {
			s.walk(a, sc, depth)
		}
		return
	}
	for _, fn := range callees {
		d := s.funcs[fn]
		inner := &scope{pkg: d.pkg, file: d.file, decl: d.decl, fn: fn, call: c, from: sc}
		s.trail = append(s.trail, fmt.Sprintf("%s's result %d (%s)", fn.Name(), i, s.at(inner, d.decl)))
		s.results(d.decl.Body, i, d.decl.Type, inner, depth)
		s.trail = s.trail[:len(s.trail)-1]
	}
}

// results follows result i of every return statement of body (of a function of type ft),
// not of the function literals inside it.
func (s *textScan) results(body *ast.BlockStmt, i int, ft *ast.FuncType, sc *scope, depth int) {
	n := 0
	var named []*ast.Ident
	if ft.Results != nil {
		for _, r := range ft.Results.List {
			if len(r.Names) == 0 {
				n++
				named = append(named, nil)
			}
			for _, nm := range r.Names {
				n++
				named = append(named, nm)
			}
		}
	}
	ast.Inspect(body, func(node ast.Node) bool {
		switch r := node.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			switch {
			case len(r.Results) == n && i < n:
				s.walk(r.Results[i], sc, depth)
			case len(r.Results) == 1 && n > 1:
				s.walkResult(r.Results[0], sc, i, depth)
			case len(r.Results) == 0 && i < len(named) && named[i] != nil && sc.decl != nil:
				if v, ok := sc.pkg.info.Defs[named[i]].(*types.Var); ok {
					s.local(v, sc, depth)
				}
			}
		}
		return true
	})
}

// strays are the literals outside the text files, sorted.
func (s *textScan) strays() []string {
	var out []string
	for k := range s.stray {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
