package store

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// rule is what the rule of a full scoped limit did at the start of one
// entry of a Start batch, as start.lua's answer marks it.
type rule struct {
	entry  int    // the entry's index in the batch (0-based)
	letter string // OnFullCancelNewest, OnFullCancelRunning or OnFullReplaceWaiting
	id     string // OnFullReplaceWaiting: the waiter to cancel
}

// splitRuled splits the tail of start.lua's answer into the gwait members
// of groups to move in (promoteWaiters) and the marks of the rules of full
// limits: "w:<i>:<id>", "n:<i>", "r:<i>" (i: the entry's index, 1-based).
// (A gwait member holds no ":": group names and ULIDs have none.)
func splitRuled(tail []string) (members []string, rules []rule) {
	for _, s := range tail {
		letter, rest, ok := strings.Cut(s, ":")
		if !ok {
			members = append(members, s)
			continue
		}
		i, id, _ := strings.Cut(rest, ":")
		n, err := strconv.Atoi(i)
		if err != nil || n < 1 {
			continue
		}
		switch letter {
		case OnFullCancelNewest, OnFullCancelRunning, OnFullReplaceWaiting:
			rules = append(rules, rule{entry: n - 1, letter: letter, id: id})
		}
	}
	return members, rules
}

// ruled notes in out (a Start's answer) the rule that acted at each entry,
// and cancels the waiters an OnFullReplaceWaiting rule replaced: each
// once, noted as Replaced at the first entry whose start replaced it when
// this call cancelled it (one that ended meanwhile, or whose cancel fails,
// is not noted: it waits on).
func (q *Queue) ruled(ctx context.Context, retention time.Duration, rules []rule, out []Started) {
	var cancelled map[string]bool
	for _, r := range rules {
		if r.entry >= len(out) {
			continue
		}
		s := &out[r.entry]
		s.OnFull = r.letter
		if r.letter != OnFullReplaceWaiting || cancelled[r.id] {
			continue
		}
		if cancelled == nil {
			cancelled = map[string]bool{}
		}
		cancelled[r.id] = true
		if _, typ, err := q.Cancel(ctx, r.id, retention); err == nil && typ != "" {
			s.Replaced = append(s.Replaced, Replaced{ID: r.id, Type: typ})
		}
	}
}
