package store

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/dtq-dev/dtq/internal/keys"
)

// Every key (and channel) of a queue shares the queue's hash tag; builders
// are found by reflection, so a new one is covered too.
func TestEveryKeyOfAQueueSharesItsHashTag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ ns, queue string }{{"dtq", "emails"}, {"x", "-"}, {strings.Repeat("n", 32), strings.Repeat("q", 64)}} {
		k := NewKeys(tc.ns, tc.queue)
		v := reflect.ValueOf(k)
		str, integer := reflect.TypeFor[string](), reflect.TypeFor[int]()
		n := 0
		for i := range v.NumMethod() {
			m := v.Type().Method(i)
			ft := m.Type
			var args []reflect.Value
			switch {
			case ft.NumIn() == 1 && ft.NumOut() == 1 && ft.Out(0) == str:
			case ft.NumIn() == 2 && ft.In(1) == str && ft.Out(0) == str:
				args = []reflect.Value{reflect.ValueOf("01ARZ3NDEKTSV4RRFFQ69G5FAV")}
			case ft.NumIn() == 2 && ft.In(1) == integer:
				args = []reflect.Value{reflect.ValueOf(Bands - 1)}
			default:
				continue // not a key builder
			}
			key := v.Method(i).Call(args)[0].String()
			n++
			if keys.HashTag(key) != tc.queue || keys.Slot(key) != keys.Slot("{"+tc.queue+"}") {
				t.Errorf("Keys.%s = %q: hash tag %q, want %q", m.Name, key, keys.HashTag(key), tc.queue)
			}
		}
		if n < 12 {
			t.Fatalf("found %d builders on Keys", n)
		}
	}
}

// The scripts spell only the fields schema.go defines: every literal field
// name a script passes to a hash command (task hashes and the info hash)
// and every field it writes to a stream entry is one of its constants.
func TestLuaFields(t *testing.T) {
	t.Parallel()
	known := map[string]bool{}
	for _, f := range []string{FieldType, FieldPayload, FieldPrio, FieldStatus, FieldAttempt, FieldMaxAtt, FieldTimeout,
		FieldCreated, FieldRun, FieldCrashes, FieldStarted, FieldWorker, FieldDue, FieldResult, FieldError, FieldCancel,
		FieldIdem, FieldDeadID, FieldFinished, FieldRequeued, FieldDiscarded, FieldSchedule, FieldTick, FieldUnique, FieldGroup, FieldGroupWait, FieldLimitKey, FieldOrderKey, FieldOrderWait, FieldParked, FieldThrottled, FieldReserved,
		FieldWorkflow, FieldStep, FieldPrev, FieldTrace, FieldParent, FieldWait, FieldResume, FieldEntry, WFStatus, WFCreated, WFFinished, WFCancel, WFNodes, WFTasks,
		WorkerKind, WorkerControl,
		InfoPaused, InfoSucceeded, InfoRetried, InfoDead, InfoCancelled, InfoRequeued, InfoDone, LimitQueue, LimitRate, LimitTAT, LimitPause} {
		known[f] = true
	}
	entry := map[string]bool{}
	for _, f := range []string{EntryID, EntryType, EntryPayload, EntryMaxAttempts, EntryTimeout, EntryCreated, EntryIdem, EntrySchedule, EntryTick, EntryGroup, EntryLimitKey, EntryWorkflow, EntryStep, EntryPrev, EntryTrace, EntryParent, EntryOrderKey, DeadID, DeadReason} {
		entry[f] = true
	}
	entry["w"] = true // the wakeup stream's one field
	call := regexp.MustCompile(`redis\.p?call\('(HSET|HMGET|HGET|HDEL|HEXISTS|HINCRBY|XADD)',\s*([^)]*)\)`)
	lit := regexp.MustCompile(`^'([a-z_]+)'$`)
	seen := 0
	for _, s := range scripts {
		for _, m := range call.FindAllStringSubmatch(s.Source(), -1) {
			args := splitArgs(m[2])
			var fields []string
			switch m[1] {
			case "HSET":
				for i := 1; i < len(args); i += 2 {
					fields = append(fields, args[i])
				}
			case "HMGET", "HDEL":
				fields = args[1:]
			case "HGET", "HEXISTS", "HINCRBY":
				fields = args[1:2]
			case "XADD":
				// XADD key [MAXLEN ~ n] id field value …
				i := 1
				for i < len(args) && args[i] != "'*'" {
					i++
				}
				for j := i + 1; j < len(args); j += 2 {
					fields = append(fields, args[j])
				}
			}
			for _, f := range fields {
				lm := lit.FindStringSubmatch(strings.TrimSpace(f))
				if lm == nil {
					continue // a computed name: h<run>, 'q' .. p
				}
				seen++
				if m[1] == "XADD" && !entry[lm[1]] || m[1] != "XADD" && !known[lm[1]] {
					t.Errorf("%s.lua: %s field %q is not in schema.go", s.Name(), m[1], lm[1])
				}
			}
		}
	}
	if seen < 50 {
		t.Fatalf("only %d literal fields found: the pattern no longer matches the scripts", seen)
	}
}

// splitArgs splits a Lua argument list at its top-level commas.
func splitArgs(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '{':
			depth++
		case ')', '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}
