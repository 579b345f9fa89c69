package taskid

import (
	"strings"
	"testing"
	"time"
)

func TestNewParsesBack(t *testing.T) {
	t.Parallel()
	now := time.UnixMilli(1_790_000_000_123)
	seen := map[string]bool{}
	for _, q := range []string{"q", "emails.high-prio_2", strings.Repeat("x", 64)} {
		for range 1000 {
			id := New(q, now)
			if seen[id] {
				t.Fatalf("duplicate id %s", id)
			}
			seen[id] = true
			gotQ, ulid, err := Parse(id)
			if err != nil || gotQ != q || len(ulid) != 26 {
				t.Fatalf("Parse(%q) = %q, %q, %v", id, gotQ, ulid, err)
			}
		}
	}
}

func TestIDsSortByTime(t *testing.T) {
	t.Parallel()
	a := New("q", time.UnixMilli(1_000_000))
	b := New("q", time.UnixMilli(1_000_001))
	if !(a < b) {
		t.Fatalf("%s !< %s", a, b)
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "q", "q-", "q-01ARZ3NDEKTSV4RRFFQ69G5FA", "q_01ARZ3NDEKTSV4RRFFQ69G5FAV",
		"-01ARZ3NDEKTSV4RRFFQ69G5FAV", "a b-01ARZ3NDEKTSV4RRFFQ69G5FAV", "q-01ARZ3NDEKTSV4RRFFQ69G5FAu",
		"q-01ARZ3NDEKTSV4RRFFQ69G5FAI", "q{x}-01ARZ3NDEKTSV4RRFFQ69G5FAV"} {
		if _, _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
}
