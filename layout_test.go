package dtq

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// The Go worker (worker*.go) and the lease server (lease*.go) are two
// runners of one claim path: what they share lives in neither (claim*.go,
// the engine's files), so neither borrows a helper of the other. The test
// names every top-level function, type, constant and variable, and every
// method of the shared engine, declared in one family's files and used in
// the other's.
func TestWorkerAndLeaseFilesShareNoHelper(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	family := func(name string) string {
		switch {
		case strings.HasSuffix(name, "_test.go") || !strings.HasSuffix(name, ".go"):
			return ""
		case strings.HasPrefix(name, "worker"):
			return "worker"
		case strings.HasPrefix(name, "lease"):
			return "lease"
		}
		return ""
	}
	files := map[string]*ast.File{}
	declaredIn := map[string]string{} // name -> file
	methodIn := map[string]string{}   // method of the engine -> file
	for _, e := range entries {
		if family(e.Name()) == "" {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = f
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				switch {
				case d.Recv == nil:
					declaredIn[d.Name.Name] = e.Name()
				case receiverIs(d, "engine"):
					methodIn[d.Name.Name] = e.Name()
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						declaredIn[s.Name.Name] = e.Name()
					case *ast.ValueSpec:
						for _, n := range s.Names {
							declaredIn[n.Name] = e.Name()
						}
					}
				}
			}
		}
	}
	for name, f := range files {
		check := func(id *ast.Ident, in map[string]string) {
			if from, ok := in[id.Name]; ok && family(from) != family(name) {
				t.Errorf("%s uses %s of %s: move what both runners need out of both (claim*.go)", fset.Position(id.Pos()), id.Name, from)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr: // x.name: a method or a field
				check(n.Sel, methodIn)
				ast.Walk(visitor(func(id *ast.Ident) { check(id, declaredIn) }), n.X)
				return false
			case *ast.KeyValueExpr: // a field's name in a literal
				if _, ok := n.Key.(*ast.Ident); ok {
					ast.Walk(visitor(func(id *ast.Ident) { check(id, declaredIn) }), n.Value)
					return false
				}
			case *ast.Field: // a field's or parameter's name
				ast.Walk(visitor(func(id *ast.Ident) { check(id, declaredIn) }), n.Type)
				return false
			case *ast.Ident:
				check(n, declaredIn)
			}
			return true
		})
	}
}

// receiverIs reports whether method d's receiver is of type name (or a
// pointer to it).
func receiverIs(d *ast.FuncDecl, name string) bool {
	typ := d.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.Name == name
}

// visitor calls fn on every identifier it walks, but field and method
// names after a dot and field names in a literal (also nested ones).
type visitor func(*ast.Ident)

func (v visitor) Visit(n ast.Node) ast.Visitor {
	switch n := n.(type) {
	case *ast.Ident:
		v(n)
	case *ast.SelectorExpr:
		ast.Walk(v, n.X)
		return nil
	case *ast.KeyValueExpr:
		if _, ok := n.Key.(*ast.Ident); ok {
			ast.Walk(v, n.Value)
			return nil
		}
	}
	return v
}

// Every exported sentinel error of the package (a top-level variable
// ErrXxx) is declared in errors.go, so that a reader finds them all in one
// place.
func TestSentinelsInErrorsFile(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || name == "errors.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					if strings.HasPrefix(n.Name, "Err") && n.IsExported() {
						t.Errorf("%s declares %s: sentinel errors belong in errors.go", fset.Position(n.Pos()), n.Name)
					}
				}
			}
		}
	}
}
