package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// TaskType is the type of the tasks the worker program runs.
const TaskType = "effect"

// Payload is the payload of an "effect" task.
type Payload struct {
	// Key is the submission's ledger key (also its idempotency key).
	Key string `json:"k"`
	// SleepMS is how long the handler works before its side effect. Unless
	// IgnoreCtx, the handler stops early (no side effect, an error) when its
	// context ends.
	SleepMS int `json:"ms,omitempty"`
	// AfterMS is how long the handler waits after its side effect before it
	// returns success: a worker killed in this window leaves an execution
	// whose effect happened but whose outcome was never recorded.
	AfterMS int `json:"after,omitempty"`
	// IgnoreCtx makes the handler sleep through its context's end, so that
	// a stale execution (its task taken over) still completes.
	IgnoreCtx bool `json:"block,omitempty"`
	// Pad makes the task bigger (memory scenarios).
	Pad string `json:"pad,omitempty"`
	// Fail makes the first Fail attempts fail, retryable, before any side
	// effect (the retry counters' scenarios).
	Fail int `json:"fail,omitempty"`
	// Die makes every attempt fail permanently, before any side effect:
	// the task must end DEAD, dead-lettered once.
	Die bool `json:"die,omitempty"`
	// Steps runs that many durable steps (dtq.Step "s1", "s2", …) before
	// the side effect, each logged in the worker's step log (ReadSteps).
	Steps int `json:"steps,omitempty"`
	// NapMS makes the handler sleep durably (dtq.Sleep "nap") after its
	// steps: its execution suspends, and a later one goes on.
	NapMS int `json:"nap,omitempty"`
	// Wait makes the handler wait (dtq.WaitFor) for signal WaitSignal
	// after its nap; the scenario sends it. A wait that times out (a
	// minute) fails the task for good: a lost signal shows as a bad dead
	// letter.
	Wait bool `json:"wait,omitempty"`
}

// WaitSignal is the name of the signal an effect task with Wait waits for.
const WaitSignal = "go"

// PayloadOf reads the Payload of a task of the suite (zero if it is none).
func PayloadOf(raw []byte) Payload {
	var p Payload
	_ = json.Unmarshal(raw, &p) // (not the suite's: zero)
	return p
}

// Effect is one execution's side effect, a line of a worker's effect log.
type Effect struct {
	TaskID  string
	Key     string
	Attempt int
	Crashes int // the task's crash count when this execution started
	Worker  string
	PID     int
	Start   time.Time // the handler started
	At      time.Time // the side effect was written
}

// Line formats e as its effect-log line:
//
//	<task id> <key> <attempt> <crashes> <worker> <pid> <start unix ns> <effect unix ns>\n
func (e Effect) Line() string {
	return fmt.Sprintf("%s %s %d %d %s %d %d %d\n", e.TaskID, e.Key, e.Attempt, e.Crashes, e.Worker, e.PID,
		e.Start.UnixNano(), e.At.UnixNano())
}

// completeLines reads r and returns its lines that end in a newline: a
// last line without one is still being written (the logs are read while
// workers run) or was cut short by a kill, and is left out.
func completeLines(r io.Reader) ([]string, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	end := bytes.LastIndexByte(b, '\n')
	if end < 0 {
		return nil, nil
	}
	return strings.Split(string(b[:end]), "\n"), nil
}

// ParseEffects reads the complete effect-log lines of r.
func ParseEffects(r io.Reader) ([]Effect, error) {
	lines, err := completeLines(r)
	if err != nil {
		return nil, err
	}
	var out []Effect
	for i, l := range lines {
		n := i + 1
		f := strings.Fields(l)
		if len(f) != 8 {
			return out, fmt.Errorf("faults: effect line %d: %d fields, want 8: %q", n, len(f), l)
		}
		var num [5]int64
		for i, s := range []string{f[2], f[3], f[5], f[6], f[7]} {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return out, fmt.Errorf("faults: effect line %d: %w", n, err)
			}
			num[i] = v
		}
		out = append(out, Effect{TaskID: f[0], Key: f[1], Attempt: int(num[0]), Crashes: int(num[1]), Worker: f[4],
			PID: int(num[2]), Start: time.Unix(0, num[3]), At: time.Unix(0, num[4])})
	}
	return out, nil
}

// EffectsFile is the name of worker id's effect log in a scenario's
// directory.
func EffectsFile(dir, worker string) string {
	return filepath.Join(dir, "effects-"+worker+".log")
}

// ReadEffects reads every effect log (effects-*.log) in dir, ordered by
// the time of the side effect.
func ReadEffects(dir string) ([]Effect, error) {
	var all []Effect
	err := eachLog(dir, "effects", func(_ string, r io.Reader) error {
		effects, err := ParseEffects(r)
		all = append(all, effects...)
		return err
	})
	sort.SliceStable(all, func(i, j int) bool { return all[i].At.Before(all[j].At) })
	return all, err
}

// eachLog calls read with each log of kind in dir (<kind>-<worker>.log)
// and its worker's id.
func eachLog(dir, kind string, read func(worker string, r io.Reader) error) error {
	files, err := filepath.Glob(filepath.Join(dir, kind+"-*.log"))
	if err != nil {
		return err
	}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		worker := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(name), kind+"-"), ".log")
		err = read(worker, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// TraceEvent is one line of a worker's trace log (trace-<worker>.log):
// a handler started (S), returned success (R) or stopped early because
// its context ended (X).
type TraceEvent struct {
	Kind   byte // 'S', 'R' or 'X'
	TaskID string
	Worker string
	At     time.Time
}

// ReadTrace reads the trace log of worker id in dir (none yet: no events).
func ReadTrace(dir, worker string) ([]TraceEvent, error) {
	f, err := os.Open(filepath.Join(dir, "trace-"+worker+".log"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lines, err := completeLines(f)
	if err != nil {
		return nil, err
	}
	var out []TraceEvent
	for i, l := range lines {
		n := i + 1
		fl := strings.Fields(l)
		if len(fl) != 3 || len(fl[0]) != 1 || !strings.Contains("SRXD", fl[0]) {
			return out, fmt.Errorf("faults: trace %s line %d: %q", worker, n, l)
		}
		ns, err := strconv.ParseInt(fl[2], 10, 64)
		if err != nil {
			return out, fmt.Errorf("faults: trace %s line %d: %w", worker, n, err)
		}
		out = append(out, TraceEvent{Kind: fl[0][0], TaskID: fl[1], Worker: worker, At: time.Unix(0, ns)})
	}
	return out, nil
}

// InFlight returns the tasks whose handler started and has not returned
// (in the order they started), by a worker's trace.
func InFlight(trace []TraceEvent) []string {
	open := map[string]int{}
	var order []string
	for _, e := range trace {
		switch e.Kind {
		case 'S':
			if open[e.TaskID] == 0 {
				order = append(order, e.TaskID)
			}
			open[e.TaskID]++
		case 'R', 'X':
			open[e.TaskID]--
		}
	}
	var out []string
	for _, id := range order {
		if open[id] > 0 {
			out = append(out, id)
		}
	}
	return out
}

// Unrecorded returns the tasks whose execution started and whose outcome
// was not recorded (no "D" yet), by a worker's trace: what a kill of the
// worker interrupts — its handler running, or returned with its outcome
// still on its way to Redis. Each may run again elsewhere.
func Unrecorded(trace []TraceEvent) []string {
	open := map[string]int{}
	var order []string
	for _, e := range trace {
		switch e.Kind {
		case 'S':
			if open[e.TaskID] == 0 {
				order = append(order, e.TaskID)
			}
			open[e.TaskID]++
		case 'D':
			open[e.TaskID]--
		}
	}
	var out []string
	for _, id := range order {
		if open[id] > 0 {
			out = append(out, id)
		}
	}
	return out
}
