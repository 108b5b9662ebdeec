package layout

// How the text scan (textscan_test.go) follows a value to its literals.

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

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
