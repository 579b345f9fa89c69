package dtq_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/taskid"
)

type charge struct {
	ID     string `json:"id"`
	Amount int    `json:"amount"`
}

// Each step's fn runs once across the task's executions: a retry gets the
// recorded results back (decoded into the step's type) and runs only the
// steps not recorded yet; the task ends SUCCEEDED once.
func TestStepRunsOnceAcrossRetries(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		var charged, emailed, shipped, runs atomic.Int64
		e.worker(&dtq.WorkerConfig{BackoffBase: time.Millisecond, BackoffMax: 2 * time.Millisecond},
			map[string]dtq.HandlerFunc{"order": func(ctx context.Context, task *dtq.Task) (any, error) {
				run := runs.Add(1)
				c, err := dtq.Step(ctx, "charge", func(context.Context) (charge, error) {
					return charge{ID: "ch_" + task.ID[len(task.ID)-4:], Amount: int(100 + charged.Add(1))}, nil
				})
				if err != nil {
					return nil, err
				}
				if run == 1 {
					return nil, errors.New("the mail server is down")
				}
				if _, err := dtq.Step(ctx, "email", func(context.Context) (string, error) {
					emailed.Add(1)
					return "sent", nil
				}); err != nil {
					return nil, err
				}
				if run == 2 {
					return nil, errors.New("the carrier is down")
				}
				label, err := dtq.Step(ctx, "ship", func(context.Context) (int, error) { return int(shipped.Add(1)), nil })
				return map[string]any{"charge": c, "label": label}, err
			}})
		task := e.enqueue("order", nil, &dtq.EnqueueOpts{MaxAttempts: 5})
		done := e.waitStatus(task.ID, dtq.StatusSucceeded, 10*time.Second)
		if charged.Load() != 1 || emailed.Load() != 1 || shipped.Load() != 1 || runs.Load() != 3 {
			t.Fatalf("charged %d, emailed %d, shipped %d times in %d runs; want each step once in 3 runs",
				charged.Load(), emailed.Load(), shipped.Load(), runs.Load())
		}
		want := `{"charge":{"id":"ch_` + task.ID[len(task.ID)-4:] + `","amount":101},"label":1}`
		if string(done.Result) != want {
			t.Errorf("result %s, want %s (the first run's charge, decoded from its record)", done.Result, want)
		}
		// Get shows the steps in the order recorded, each with its run.
		got, err := e.c.Get(t.Context(), task.ID)
		if err != nil {
			t.Fatal(err)
		}
		var seen []string
		for _, st := range got.Steps {
			seen = append(seen, st.Name+"@"+strconv.Itoa(st.Run)+"="+string(st.Result))
		}
		if w := []string{"charge@1=" + want[len(`{"charge":`):strings.Index(want, `,"label"`)], "email@2=\"sent\"", "ship@3=1"}; !slices.Equal(seen, w) {
			t.Errorf("Get's steps %q, want %q", seen, w)
		}
	})
}

// Bad calls get clear errors: outside a handler, a name used twice in one
// execution, a bad name, a result over the limit (fn ran, nothing is
// recorded, so a retry runs it again).
func TestStepErrors(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		if _, err := dtq.Step(t.Context(), "x", func(context.Context) (int, error) { return 1, nil }); !errors.Is(err, dtq.ErrNoTask) {
			t.Errorf("Step outside a handler: %v, want ErrNoTask", err)
		}
		var big atomic.Int64
		errs := make(chan [3]error, 2)
		e.worker(&dtq.WorkerConfig{BackoffBase: time.Millisecond, BackoffMax: 2 * time.Millisecond},
			map[string]dtq.HandlerFunc{"bad": func(ctx context.Context, _ *dtq.Task) (any, error) {
				one := func(context.Context) (int, error) { return 1, nil }
				var got [3]error
				if _, err := dtq.Step(ctx, "a", one); err != nil {
					return nil, err
				}
				_, got[0] = dtq.Step(ctx, "a", one)
				_, got[1] = dtq.Step(ctx, "", one)
				_, got[2] = dtq.Step(ctx, "big", func(context.Context) (string, error) {
					big.Add(1)
					return strings.Repeat("x", dtq.MaxStepResult), nil
				})
				errs <- got
				return nil, got[2]
			}})
		task := e.enqueue("bad", nil, &dtq.EnqueueOpts{MaxAttempts: 2})
		e.waitStatus(task.ID, dtq.StatusDead, 10*time.Second)
		got := <-errs
		var ve *dtq.ValidationError
		if !errors.Is(got[0], dtq.ErrDuplicateStep) {
			t.Errorf("a name twice: %v, want ErrDuplicateStep", got[0])
		}
		if !errors.As(got[1], &ve) {
			t.Errorf("an empty name: %v, want a ValidationError", got[1])
		}
		if !errors.As(got[2], &ve) || !strings.Contains(got[2].Error(), "MaxStepResult") {
			t.Errorf("a result over the limit: %v, want a ValidationError naming MaxStepResult", got[2])
		}
		if big.Load() != 2 {
			t.Errorf("the step whose result was refused ran %d times in 2 attempts, want 2 (nothing was recorded)", big.Load())
		}
	})
}

// A step of an execution whose task was taken over elsewhere is refused
// (ErrRunLost): only the running execution records.
func TestStepOfALostRunIsRefused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		running, release := make(chan struct{}), make(chan struct{})
		got := make(chan error, 1)
		var ran atomic.Int64
		e.worker(&dtq.WorkerConfig{Queues: []string{"steal"}, VisibilityTimeout: 10 * time.Second},
			map[string]dtq.HandlerFunc{"slow": func(ctx context.Context, _ *dtq.Task) (any, error) {
				close(running)
				<-release
				_, err := dtq.Step(ctx, "late", func(context.Context) (int, error) { return int(ran.Add(1)), nil })
				got <- err
				return nil, err
			}})
		task := e.enqueue("slow", nil, &dtq.EnqueueOpts{Queue: "steal"})
		waitClosed(t, running, "the slow task starts")
		ghostStart(t, e, "steal", "thief", true)
		close(release)
		if err := <-got; !errors.Is(err, dtq.ErrRunLost) {
			t.Fatalf("a step of the lost run: %v, want ErrRunLost", err)
		}
		_, ulid, _ := taskid.Parse(task.ID)
		key := e.Namespace + ":{steal}:steps:" + ulid
		if n, err := e.Client.Do(t.Context(), e.Client.B().Hlen().Key(key).Build()).AsInt64(); err != nil || n != 0 {
			t.Fatalf("the lost run's step was recorded: %d fields (%v)", n, err)
		}
	})
}

// A task's step records stay while it may run again, go with the
// retention once it ended, and with its queue when the queue is deleted.
func TestStepRecordsAreBounded(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		e.worker(&dtq.WorkerConfig{Queues: []string{"kept"}},
			map[string]dtq.HandlerFunc{"one": func(ctx context.Context, _ *dtq.Task) (any, error) {
				return dtq.Step(ctx, "s", func(context.Context) (int, error) { return 7, nil })
			}})
		task := e.enqueue("one", nil, &dtq.EnqueueOpts{Queue: "kept"})
		e.waitStatus(task.ID, dtq.StatusSucceeded, 10*time.Second)
		_, ulid, _ := taskid.Parse(task.ID)
		key := e.Namespace + ":{kept}:steps:" + ulid
		var ttl int64
		eventually(t, 5*time.Second, "the records expire with the retention", func() bool {
			var err error
			ttl, err = e.Client.Do(t.Context(), e.Client.B().Pttl().Key(key).Build()).AsInt64()
			if err != nil {
				t.Fatal(err)
			}
			return ttl > 0 && ttl <= (24*time.Hour).Milliseconds()
		})
		if _, err := e.a.DeleteQueue(t.Context(), "kept", &dtq.DeleteQueueOpts{Force: true}); err != nil {
			t.Fatal(err)
		}
		if n, err := e.Client.Do(t.Context(), e.Client.B().Exists().Key(key).Build()).AsInt64(); err != nil || n != 0 {
			t.Fatalf("step records after DeleteQueue: exists %d (%v)", n, err)
		}
	})
}

// A handler of three steps whose worker process is SIGKILLed right after
// each step in turn (three kills, three takeovers): each step's fn ran
// exactly once across the four executions (the effect log), the later
// executions got the recorded results back, and the task ended SUCCEEDED
// once, with the three crashes counted.
func TestStepsSurviveAKillAfterEachStep(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		effects := filepath.Join(t.TempDir(), "effects")
		const vt = time.Second
		task := e.enqueue("stepper", nil, nil)
		logged := func(prefix string) int { return countLines(effects, prefix) }
		for k := 1; k <= 3; k++ {
			step := "step-" + strconv.Itoa(k)
			marker := effects + ".stall-" + step
			if err := os.WriteFile(marker, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			c := startChildWorker(t, e, "w"+strconv.Itoa(k), vt, childEffectsEnv+"="+effects)
			eventually(t, 30*time.Second, step+" recorded", func() bool { return logged("after "+task.ID+" "+step+" ") == 1 })
			c.Process.Kill()
			c.Wait()
			if err := os.Remove(marker); err != nil {
				t.Fatal(err)
			}
		}
		startChildWorker(t, e, "w4", vt, childEffectsEnv+"="+effects)
		done := e.waitStatus(task.ID, dtq.StatusSucceeded, 30*time.Second)
		for k := 1; k <= 3; k++ {
			if n := logged("fn " + task.ID + " step-" + strconv.Itoa(k) + " "); n != 1 {
				t.Errorf("step-%d's fn ran %d times, want once", k, n)
			}
		}
		if string(done.Result) != "60" || done.Crashes != 3 {
			t.Errorf("ended with result %s after %d crashes, want 60 (10+20+30, from the records) after 3", done.Result, done.Crashes)
		}
		var succeeded int
		for _, x := range done.History {
			if x.Outcome == dtq.OutcomeSucceeded {
				succeeded++
			}
		}
		if succeeded != 1 {
			t.Errorf("history %+v: %d succeeded runs, want 1", done.History, succeeded)
		}
	})
}
