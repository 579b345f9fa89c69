package store

import (
	"reflect"
	"strings"
	"testing"

	"github.com/dtq-dev/dtq/internal/keys"
)

// keyFamilies calls every method of builder (a key builder value) that
// returns a string key and takes nothing, an int or a string, and returns
// each key's family: the key itself, or for a key built from an argument
// the part before it followed by "*" ("task:*"). The builder's prefix is
// cut off.
func keyFamilies(t *testing.T, builder any, prefix string) map[string]string {
	t.Helper()
	out := map[string]string{}
	v := reflect.ValueOf(builder)
	for i := range v.NumMethod() {
		m, name := v.Method(i), v.Type().Method(i).Name
		mt := m.Type()
		if mt.NumOut() != 1 || mt.Out(0).Kind() != reflect.String || mt.NumIn() > 1 || name == "Prefix" {
			continue
		}
		var key, family string
		switch {
		case mt.NumIn() == 0:
			key = m.Call(nil)[0].String()
			family = strings.TrimPrefix(key, prefix)
		case mt.In(0).Kind() == reflect.Int:
			key = m.Call([]reflect.Value{reflect.ValueOf(7)})[0].String()
			family = strings.TrimSuffix(strings.TrimPrefix(key, prefix), "7") + "*"
		case mt.In(0).Kind() == reflect.String:
			key = m.Call([]reflect.Value{reflect.ValueOf("ARG")})[0].String()
			family = strings.TrimSuffix(strings.TrimPrefix(key, prefix), "ARG") + "*"
		default:
			continue
		}
		if !strings.HasPrefix(key, prefix) {
			t.Fatalf("%s() = %q: not under the queue's prefix %q", name, key, prefix)
		}
		out[name] = family
	}
	return out
}

// The queue primitive's keys and the task engine's never collide in one
// namespace, whatever the names: a message queue may share a task queue's
// name (and so its hash tag), and no key of either, for any topic, task,
// band or hash, is a key of the other. Every key builder method of both is
// checked, so a new key is too.
func TestQueueAndEngineKeysNeverCollide(t *testing.T) {
	t.Parallel()
	const ns, name = "ns", "orders"
	engine := keyFamilies(t, NewKeys(ns, name), ns+":{"+name+"}:")
	mq := keyFamilies(t, keys.NewQueue(ns, name), ns+":{"+name+"}:")
	if len(engine) < 25 || len(mq) < 9 {
		t.Fatalf("found %d engine and %d queue key builders: the reflection missed some", len(engine), len(mq))
	}
	// overlap reports whether a key of family a can equal one of family b
	// (a family ending in "*" stands for any continuation).
	overlap := func(a, b string) bool {
		aw, bw := strings.HasSuffix(a, "*"), strings.HasSuffix(b, "*")
		a, b = strings.TrimSuffix(a, "*"), strings.TrimSuffix(b, "*")
		switch {
		case aw && bw:
			return strings.HasPrefix(a, b) || strings.HasPrefix(b, a)
		case aw:
			return strings.HasPrefix(b, a)
		case bw:
			return strings.HasPrefix(a, b)
		}
		return a == b
	}
	for en, ef := range engine {
		for qn, qf := range mq {
			if overlap(ef, qf) {
				t.Errorf("engine key %s (%q) and queue key %s (%q) can be the same key", en, ef, qn, qf)
			}
		}
	}
}
