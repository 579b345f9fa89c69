package dtq_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/store"
)

// A handler's progress shows in Get and as an event while it runs, and is
// gone once it ends; bad reports and reports outside a handler are errors.
func TestProgress(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		var mu sync.Mutex
		var seen []dtq.Event
		evCtx, stopEvents := context.WithCancel(ctx)
		defer stopEvents()
		go e.c.Events(evCtx, nil, func(ev dtq.Event) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, ev)
		})
		reported, release := make(chan error, 1), make(chan struct{})
		e.worker(nil, map[string]dtq.HandlerFunc{
			"long": func(ctx context.Context, _ *dtq.Task) (any, error) {
				if err := dtq.Progress(ctx, 1.5, ""); err == nil {
					return nil, dtq.Permanent(errors.New("a fraction of 1.5 was taken"))
				}
				reported <- dtq.Progress(ctx, 0.25, "resized 1 of 4")
				<-release
				return nil, nil
			},
		})
		time.Sleep(100 * time.Millisecond) // the subscription is up
		task := e.enqueue("long", nil, nil)
		if err := <-reported; err != nil {
			t.Fatal(err)
		}
		got, err := e.c.Get(ctx, task.ID)
		if err != nil || got.Progress == nil || got.Progress.Fraction != 0.25 || got.Progress.Note != "resized 1 of 4" ||
			got.Progress.At.IsZero() {
			t.Fatalf("running task's progress: %+v %v", got.Progress, err)
		}
		eventually(t, 5*time.Second, "the progress event", func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, ev := range seen {
				if ev.TaskID == task.ID && ev.Status == dtq.StatusRunning && ev.Progress != nil && ev.Progress.Fraction == 0.25 &&
					ev.Progress.Note == "resized 1 of 4" && ev.Error == "" {
					return true
				}
			}
			return false
		})
		close(release)
		done := e.waitStatus(task.ID, dtq.StatusSucceeded, 10*time.Second)
		if done.Progress != nil {
			t.Fatalf("a finished task's progress: %+v", done.Progress)
		}
		k := store.NewKeys(e.Namespace, "default")
		if n, err := e.Client.Do(ctx, e.Client.B().Hlen().Key(k.Progress()).Build()).AsInt64(); err != nil || n != 0 {
			t.Fatalf("progress reports left after the finish: %d %v", n, err)
		}
		if err := dtq.Progress(ctx, 0.5, ""); !errors.Is(err, dtq.ErrNoTask) {
			t.Fatalf("progress outside a handler: %v", err)
		}
	})
}

// A lease reports progress; a lost lease's report is refused, and the
// report of the run taken over is swept away.
func TestLeaseProgress(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		task := e.enqueue("remote", nil, nil)
		first := e.lease(dtq.LeaseRequest{Worker: "a", Timeout: 100 * time.Millisecond}, 1)[0]
		if err := e.ls.LeaseProgress(ctx, first.Token, 0.5, "half"); err != nil {
			t.Fatal(err)
		}
		if got, _ := e.c.Get(ctx, task.ID); got.Progress == nil || got.Progress.Note != "half" {
			t.Fatalf("leased task's progress: %+v", got.Progress)
		}
		var ve *dtq.ValidationError
		if err := e.ls.LeaseProgress(ctx, first.Token, -0.1, ""); !errors.As(err, &ve) || ve.Field != "fraction" {
			t.Fatalf("a negative fraction: %v", err)
		}
		second := e.takeOver("b", 100*time.Millisecond)
		if got, _ := e.c.Get(ctx, task.ID); got.Progress != nil {
			t.Fatalf("the new run shows the lost run's progress: %+v", got.Progress)
		}
		if err := e.ls.LeaseProgress(ctx, first.Token, 0.9, "late"); !errors.Is(err, dtq.ErrLeaseLost) {
			t.Fatalf("the lost lease's report: %v", err)
		}
		k := store.NewKeys(e.Namespace, "default")
		eventually(t, 10*time.Second, "the scheduler sweeps the lost run's report", func() bool {
			n, err := e.Client.Do(ctx, e.Client.B().Hlen().Key(k.Progress()).Build()).AsInt64()
			return err == nil && n == 0
		})
		if _, err := e.ls.CompleteLease(ctx, second.Token, nil); err != nil {
			t.Fatal(err)
		}
	})
}
