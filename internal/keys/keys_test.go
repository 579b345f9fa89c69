package keys

import (
	"reflect"
	"strings"
	"testing"
)

const allowed = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"

func TestValidNameAcceptsEachAllowedByteAloneAndNothingElse(t *testing.T) {
	t.Parallel()
	for c := range 256 {
		s := string([]byte{byte(c)})
		want := strings.IndexByte(allowed, byte(c)) >= 0 && c != '.' // a name is not only dots
		if got := ValidName(s); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", s, got, want)
		}
		if got := CheckNamespace(s) == nil; got != want {
			t.Errorf("CheckNamespace(%q) accepted = %v, want %v", s, got, want)
		}
	}
}

func TestValidName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"", false},
		{"a", true},
		{allowed[:64], true},
		{"orders.v2-eu_west", true},
		// Not only dots: "." and ".." are steps of a URL path
		// (/api/v1/queues/..), not names.
		{".", false},
		{"..", false},
		{"...", false},
		{strings.Repeat(".", 64), false},
		{".a", true},
		{"a.", true},
		{"..a..", true},
		{"-", true},
		{"_", true},
		{strings.Repeat("x", 64), true},
		{strings.Repeat("x", 65), false},
		{"a b", false},
		{"a:b", false}, // ':' separates key parts
		{"{a}", false}, // braces would move the hash tag
		{"a{b", false},
		{"a}b", false},
		{"a*", false},
		{"a/b", false},
		{"abc\n", false}, // '$' must not match before a trailing newline
		{"\nabc", false},
		{"é", false},
		{"a\x00", false},
	} {
		if got := ValidName(tc.s); got != tc.want {
			t.Errorf("ValidName(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

func TestCheckName(t *testing.T) {
	t.Parallel()
	if err := CheckName("topic", "orders"); err != nil {
		t.Errorf("CheckName(valid) = %v, want nil", err)
	}
	err := CheckName("topic", "bad:name")
	if err == nil {
		t.Fatal("CheckName(invalid) = nil, want an error")
	}
	// The error names what was invalid and quotes the value.
	for _, want := range []string{"topic", `"bad:name"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %s", err, want)
		}
	}
	if err := CheckName("group", strings.Repeat("g", 65)); err == nil {
		t.Error("CheckName(65 characters) = nil, want an error")
	}
	// The error states the whole rule.
	err = CheckName("queue", "..")
	if err == nil || !strings.Contains(err.Error(), "not only dots") || !strings.Contains(err.Error(), "1-64") {
		t.Errorf(`CheckName("queue", "..") = %v, want the rule`, err)
	}
	if err := CheckNamespace(".."); err == nil || !strings.Contains(err.Error(), "1-32") {
		t.Errorf(`CheckNamespace("..") = %v, want the rule with 32`, err)
	}
}

func TestCheckNamespace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s  string
		ok bool
	}{
		{"", false},
		{"dtq", true},
		{"test-1.ns_x", true},
		{strings.Repeat("n", 32), true},
		{strings.Repeat("n", 33), false}, // names may be 64 long, namespaces only 32
		{"ns:x", false},
		{"{ns}", false},
		{"ns\n", false},
		{"..", false},
		{".", false},
		{"n.", true},
	} {
		err := CheckNamespace(tc.s)
		if (err == nil) != tc.ok {
			t.Errorf("CheckNamespace(%q) = %v, want ok=%v", tc.s, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "namespace") {
			t.Errorf("error %q does not say it is about the namespace", err)
		}
	}
}

// hashTag returns what Redis Cluster hashes for key: the part between the
func TestSlotMatchesRedis(t *testing.T) {
	t.Parallel()
	// Values from CLUSTER KEYSLOT on Redis 7.0.
	for key, want := range map[string]int{
		"123456789":        12739,
		"foo":              12182,
		"somekey":          11058,
		"orders":           105,
		"dtq:{orders}:t:a": 105,
		"a{b}{c}":          3300, // the first tag counts
		"{}x":              10595,
		"a{}{b}":           15033, // an empty first tag means the whole key
		"{a":               10276,
	} {
		if got := Slot(key); got != want {
			t.Errorf("Slot(%q) = %d, want %d", key, got, want)
		}
	}
}

// built is one key and whether its builder took the topic.
type built struct {
	key     string
	topical bool
}

// builders returns the keys of every key builder of Queue, by method name.
// Builders are found by reflection so that a new one is covered without
// editing this test: methods returning a string that take nothing or a topic.
func builders(t *testing.T, q Queue, topic string) map[string]built {
	t.Helper()
	keys := map[string]built{}
	v := reflect.ValueOf(q)
	str := reflect.TypeFor[string]()
	for i := range v.NumMethod() {
		m := v.Type().Method(i)
		ft := m.Type // includes the receiver
		if m.Name == "Prefix" || ft.NumOut() != 1 || ft.Out(0) != str {
			continue // Prefix is checked on its own: it is not a key
		}
		var args []reflect.Value
		switch {
		case ft.NumIn() == 1:
		case ft.NumIn() == 2 && ft.In(1) == str:
			args = []reflect.Value{reflect.ValueOf(topic)}
		default:
			t.Fatalf("Queue.%s has a signature this test does not know", m.Name)
		}
		keys[m.Name] = built{v.Method(i).Call(args)[0].String(), len(args) == 1}
	}
	for _, name := range []string{"Stream", "Delayed", "Waiters", "Room", "Dedup", "Tombstones", "Dead", "Wake", "Stats"} {
		if _, ok := keys[name]; !ok {
			t.Fatalf("key builder Queue.%s not found among %d", name, len(keys))
		}
	}
	return keys
}

func TestEveryKeyOfAQueueSharesItsHashTag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ ns, queue, topic string }{
		{"dtq", "orders", "created"},
		{"a", "q", "t"},
		{strings.Repeat("n", 32), strings.Repeat("q", 64), strings.Repeat("t", 64)},
		{"ns.1", "my-queue_2.v3", "topic.with-dots_and-dashes"},
		{"x", "-", "_"},
	} {
		q := NewQueue(tc.ns, tc.queue)
		if err := CheckNamespace(tc.ns); err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{tc.queue, tc.topic} {
			if err := CheckName("name", s); err != nil {
				t.Fatal(err)
			}
		}
		if want := tc.ns + ":{" + tc.queue + "}:"; q.Prefix() != want {
			t.Errorf("Prefix() = %q, want %q", q.Prefix(), want)
		}
		for name, b := range builders(t, q, tc.topic) {
			key := b.key
			if tag := HashTag(key); tag != tc.queue {
				t.Errorf("%s = %q: hash tag %q, want %q", name, key, tag, tc.queue)
			}
			if got, want := Slot(key), Slot("{"+tc.queue+"}"); got != want {
				t.Errorf("%s = %q: slot %d, want the queue's slot %d", name, key, got, want)
			}
			if !strings.HasPrefix(key, q.Prefix()) || len(key) == len(q.Prefix()) {
				t.Errorf("%s = %q does not extend the queue prefix %q", name, key, q.Prefix())
			}
		}
	}
}

// TestKeysDoNotCollide checks that no two builders, for any two topics,
// yield the same key, and that queues differing only in name, or only in
// namespace, share no key.
func TestKeysDoNotCollide(t *testing.T) {
	t.Parallel()
	topics := []string{"a", "b", "keys", "tombs", "dead", "wake", "stats", "t", "d", "w", "r", "t.a", "t-a"}
	owner := map[string]string{}
	for _, q := range []Queue{NewQueue("dtq", "q"), NewQueue("dtq", "q2"), NewQueue("dtq2", "q")} {
		for _, topic := range topics {
			for name, b := range builders(t, q, topic) {
				who := q.Prefix() + " " + name + "()"
				if b.topical {
					who = q.Prefix() + " " + name + "(" + topic + ")"
				}
				if prev, ok := owner[b.key]; ok && prev != who {
					t.Errorf("key %q built by both %s and %s", b.key, prev, who)
				}
				owner[b.key] = who
			}
		}
	}
}
