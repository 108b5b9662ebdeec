package layout

// textScan follows what GitHub shows a person back to the string literals it is made of, and
// says where each literal that words something lies. It type-checks the packages that write
// to GitHub (typecheck_test.go), so every name is resolved to the one object it means, and it
// follows only values of a text type (a string, a named string, a slice, map or pointer of
// them, a function that returns one); how it follows them is textwalk_test.go:
//
//   - the roots are where text leaves for GitHub: the body of every Comment and EditComment
//     call (sinkCalls), and the fields that carry a comment's or a pull request's text
//     (sinkFields) wherever a composite literal or an assignment sets them;
//   - from there it follows local variables to everything assigned to them (and written into
//     them: b.WriteString(x), fmt.Fprintf(&b, x)), constants and package variables to their
//     values, a struct's field to everything the scanned code sets it to, a call of a scanned
//     function to its results with the call's arguments bound to its parameters (an interface
//     method to every method of the scanned packages that implements it), and a function
//     literal to its results. A parameter reached with no call in view makes every call of
//     its function a root, at that argument;
//   - a call into a package it does not scan (fmt, strings, report) is text made of its
//     arguments: they are followed, the callee's own words are not. report's renderings (the
//     pull request body's report, the summary, the check run) are their own kind of text, and
//     so are the waits the runner's packages word (leaf.ModelWait.String, sandbox.SlotWait.For).
//
// What it does not see: text put into a map or a slice by index (m[k] = x) or sent on a
// channel, and reflection. The tests say how much it reaches (every text file, enough roots)
// and prove it on small packages, so that it cannot go blind unnoticed.

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"regexp"
	"sort"
	"strconv"
	"strings"
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
// pipeline keeps it, what Publish writes, and what report ends the pull request body with.
var sinkFields = map[string][]string{
	"~/run.Status":             {"Note", "Notices", "Summary"},
	"~/run.Progress":           {"Waiting", "SandboxWait"},
	"~/run.Outcome":            {"PRBody", "Summary", "Headline"},
	"~/run.row":                {"PRBody", "Summary", "Headline"},
	"~/githubapp.PublishInput": {"Title", "Body", "CommitMessage"},
	"~/report.Fit":             {"Suffix"},
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

// strays are the literals outside the text files, sorted.
func (s *textScan) strays() []string {
	var out []string
	for k := range s.stray {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
