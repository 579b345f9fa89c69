package dtq_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dtq-dev/dtq"
)

// Every action the engine records in the audit stream is one of
// AuditActions: each call of audit names a constant of auditAction (no
// literal, no conversion), and the constants are the list.
func TestAuditActionsAreTheOnesRecorded(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var consts []string
	calls := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				if id, ok := n.Type.(*ast.Ident); ok && id.Name == "auditAction" {
					for _, v := range n.Values {
						lit, _ := v.(*ast.BasicLit)
						if lit == nil {
							t.Errorf("%s: an auditAction constant that is not a string literal", fset.Position(v.Pos()))
							continue
						}
						s, _ := strconv.Unquote(lit.Value)
						consts = append(consts, s)
					}
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "auditAction" {
					t.Errorf("%s: a conversion to auditAction: name the action as a constant", fset.Position(n.Pos()))
				}
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "audit" && len(n.Args) == 5 {
					calls++
					if _, lit := n.Args[1].(*ast.BasicLit); lit {
						t.Errorf("%s: audit with a literal action: name it as a constant", fset.Position(n.Pos()))
					}
				}
			}
			return true
		})
	}
	if calls < 10 {
		t.Fatalf("found %d calls of audit: the scan is broken", calls)
	}
	got := dtq.AuditActions()
	if !slices.Equal(slices.Sorted(slices.Values(consts)), slices.Sorted(slices.Values(got))) {
		t.Errorf("AuditActions() = %v, the auditAction constants are %v", got, consts)
	}
}

// The docs list every audit action, in AuditActions' order (issue 30: the
// API docs and `dtq audit --help` listed fewer than were recorded).
func TestDocsListEveryAuditAction(t *testing.T) {
	t.Parallel()
	list := strings.Join(dtq.AuditActions(), ", ")
	for _, doc := range []string{"docs/api.md", "docs/CONTRACT.md", "docs/dashboard.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(b)), " ") // lines joined
		i := strings.Index(text, list)
		if i < 0 {
			t.Errorf("%s does not list the audit actions as %q", doc, list)
			continue
		}
		if rest := text[i+len(list):]; strings.HasPrefix(rest, ",") {
			t.Errorf("%s lists more audit actions than %q: %.60s", doc, list, rest)
		}
	}
	b, err := os.ReadFile("api/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Paths map[string]map[string]struct {
			Description string `json:"description"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Enum []any `json:"enum"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	var enum []string
	for _, v := range spec.Components.Schemas["AuditEntry"].Properties["action"].Enum {
		s, _ := v.(string)
		enum = append(enum, s)
	}
	if !slices.Equal(enum, dtq.AuditActions()) {
		t.Errorf("openapi.json AuditEntry.action enum %v, want %v", enum, dtq.AuditActions())
	}
	if d := spec.Paths["/api/v1/audit"]["get"].Description; !strings.Contains(d, list) {
		t.Errorf("openapi.json GET /api/v1/audit: %q does not list %q", d, list)
	}
}
