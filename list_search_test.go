package dtq_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// List searches by id prefix, last error (any letter case) and creation
// time, with the type and status filters.
func TestListSearch(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		e.worker(nil, map[string]dtq.HandlerFunc{
			"bad": func(context.Context, *dtq.Task) (any, error) {
				return nil, dtq.Permanent(errors.New("Disk Full on /var"))
			},
		})
		start := time.Now().Add(-time.Second)
		dead := e.enqueue("bad", nil, nil)
		e.waitStatus(dead.ID, dtq.StatusDead, 10*time.Second)
		queued := []string{e.enqueue("idle", nil, &dtq.EnqueueOpts{Queue: "s"}).ID, e.enqueue("idle", nil, &dtq.EnqueueOpts{Queue: "s"}).ID}
		ids := func(o dtq.ListOpts) []string {
			t.Helper()
			page, err := e.c.List(ctx, o)
			if err != nil {
				t.Fatalf("list %+v: %v", o, err)
			}
			var out []string
			for _, task := range page.Tasks {
				out = append(out, task.ID)
			}
			return out
		}
		if got := ids(dtq.ListOpts{Queue: "default", ErrorContains: "disk full"}); len(got) != 1 || got[0] != dead.ID {
			t.Errorf("by error: %v", got)
		}
		if got := ids(dtq.ListOpts{Queue: "default", ErrorContains: "no such text"}); len(got) != 0 {
			t.Errorf("by another error: %v", got)
		}
		if got := ids(dtq.ListOpts{Queue: "s", IDPrefix: queued[1]}); len(got) != 1 || got[0] != queued[1] {
			t.Errorf("by a whole id: %v", got)
		}
		if got := ids(dtq.ListOpts{Queue: "s", IDPrefix: "s-"}); len(got) != 2 {
			t.Errorf("by the queue's prefix: %v", got)
		}
		if got := ids(dtq.ListOpts{Queue: "s", CreatedAfter: start, CreatedBefore: time.Now().Add(time.Second)}); len(got) != 2 {
			t.Errorf("created in the range: %v", got)
		}
		if got := ids(dtq.ListOpts{Queue: "s", CreatedBefore: start}); len(got) != 0 {
			t.Errorf("created before the start: %v", got)
		}
		if got := ids(dtq.ListOpts{Queue: "default", Type: "bad", Status: dtq.StatusDead, ErrorContains: "VAR"}); len(got) != 1 {
			t.Errorf("type, status and error: %v", got)
		}
		var ve *dtq.ValidationError
		if _, err := e.c.List(ctx, dtq.ListOpts{Queue: "s", CreatedAfter: time.Now(), CreatedBefore: start}); !errors.As(err, &ve) {
			t.Errorf("an empty range: %v", err)
		}
	})
}
