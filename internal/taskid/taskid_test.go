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

// An id made from an entry's location turns back into it, parses as a task
// id, sorts by the entry's time, and is told apart from a random id.
func TestFromEntryRoundTrip(t *testing.T) {
	t.Parallel()
	cases := []struct {
		band int
		eid  string
	}{{0, "1790000000123-0"}, {9, "1790000000123-7"}, {5, "1-18446744073709551615"}, {3, "281474976710655-42"}}
	for _, c := range cases {
		id, err := FromEntry("jobs", c.band, c.eid)
		if err != nil {
			t.Fatal(err)
		}
		q, ulid, err := Parse(id)
		if err != nil || q != "jobs" {
			t.Fatalf("Parse(%q): %q %v", id, q, err)
		}
		band, eid, ok := Entry(ulid)
		if !ok || band != c.band || eid != c.eid {
			t.Fatalf("Entry(%q) = %d %q %v, want %d %q", ulid, band, eid, ok, c.band, c.eid)
		}
	}
	a, _ := FromEntry("q", 9, "1000-5")
	b, _ := FromEntry("q", 0, "1001-0")
	if !(a < b) {
		t.Fatalf("%s !< %s: derived ids do not sort by time", a, b)
	}
	for range 1000 {
		_, ulid, _ := Parse(New("q", time.Now()))
		if _, _, ok := Entry(ulid); ok {
			t.Fatalf("random id %s read as an entry's", ulid)
		}
	}
	for _, bad := range []string{"1-", "-1", "x-1", "1-x", "300000000000000-0"} {
		if _, err := FromEntry("q", 1, bad); err == nil {
			t.Errorf("FromEntry(%q) accepted", bad)
		}
	}
}
