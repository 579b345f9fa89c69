package claim

import (
	"strings"

	"github.com/dtq-dev/dtq/internal/store"
)

// The scoped limits (a task type's, a limit key's) as a claimer — a Go
// worker's queue reader or the lease server — last read them, and which
// of them a claimed entry falls under.

// Scopes are the scoped limits a queue has (store.ScopeType+type,
// store.ScopeKey+key), as a worker last read them: true for those with a
// concurrency limit (whose starts take leases).
type Scopes map[string]bool

// ScopesOf is the scope set of a queue's scoped limits defs (nil for
// none).
func ScopesOf(defs map[string]store.ScopeDef) Scopes {
	if len(defs) == 0 {
		return nil
	}
	set := make(Scopes, len(defs))
	for s, d := range defs {
		set[s] = d.MaxRunning > 0
	}
	return set
}

// Of returns the scopes of set the task of entry e is under.
func (set Scopes) Of(e *store.Entry) []string {
	if len(set) == 0 || e.Spec == nil {
		return nil
	}
	var out []string
	if s := store.ScopeType + e.Spec.Type; has(set, s) {
		out = append(out, s)
	}
	if k := e.Spec.LimitKey; k != "" && (has(set, store.ScopeKey+k) || has(set, store.ScopeKey+store.EachKey)) {
		out = append(out, store.ScopeKey+k)
	}
	return out
}

func has(set Scopes, scope string) bool { _, ok := set[scope]; return ok }

// Leased returns those of scopes that take leases in set.
func (set Scopes) Leased(scopes []string) []string {
	var out []string
	for _, s := range scopes {
		leased := set[s]
		if strings.HasPrefix(s, store.ScopeKey) && !has(set, s) {
			leased = set[store.ScopeKey+store.EachKey] // the limit of each key
		}
		if leased {
			out = append(out, s)
		}
	}
	return out
}
