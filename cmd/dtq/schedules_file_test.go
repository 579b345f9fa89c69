package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
)

const scheduleYAML = `schedules:
  - name: nightly
    queue: reports
    cron: "30 2 * * *"
    time_zone: Europe/Berlin
    task_type: report
    payload: {kind: daily, days: [1, 2]}
    priority: 7
    max_attempts: 2
    timeout: 90s
    missed: catch_up
    catch_up_max: 3
  - name: beat
    cron: "@every 30s"
    task_type: ping
`

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "schedules.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The declarative file creates and updates the schedules it names, leaves
// the others alone, and applied twice changes nothing the second time.
func TestSchedulesFileAppliesIdempotently(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, err := dtq.NewClient(redisconn.Wrap(b.Client), &dtq.Config{Namespace: b.Namespace})
		if err != nil {
			t.Fatal(err)
		}
		other, err := dtq.NewAdmin(c).UpsertSchedule(ctx, dtq.Schedule{Name: "mine", Cron: "@hourly", TaskType: "x"})
		if err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		log := slog.New(slog.NewTextHandler(&logs, nil))
		path := writeFile(t, scheduleYAML)
		if err := applySchedules(ctx, log, dtq.NewAdmin(c), path); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(logs.String(), "created=2 updated=0 unchanged=0") {
			t.Errorf("first apply logged:\n%s", logs.String())
		}
		n, err := dtq.NewAdmin(c).GetSchedule(ctx, "reports", "nightly")
		if err != nil {
			t.Fatal(err)
		}
		if n.Cron != "30 2 * * *" || n.TimeZone != "Europe/Berlin" || *n.Priority != 7 || n.MaxAttempts != 2 ||
			n.Timeout != 90*time.Second || n.Missed != dtq.MissedCatchUp || n.CatchUpMax != 3 || string(n.Payload) != `{"days":[1,2],"kind":"daily"}` {
			t.Errorf("nightly as stored: %+v payload %s", n, n.Payload)
		}
		audit := func() int {
			es, err := dtq.NewAdmin(c).Audit(ctx, 1000)
			if err != nil {
				t.Fatal(err)
			}
			return len(es)
		}
		before := audit()
		logs.Reset()
		if err := applySchedules(ctx, log, dtq.NewAdmin(c), path); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(logs.String(), "created=0 updated=0 unchanged=2") {
			t.Errorf("second apply logged:\n%s", logs.String())
		}
		if again, _ := dtq.NewAdmin(c).GetSchedule(ctx, "reports", "nightly"); !again.UpdatedAt.Equal(n.UpdatedAt) {
			t.Errorf("the second apply rewrote nightly: updated %v, was %v", again.UpdatedAt, n.UpdatedAt)
		}
		if a := audit(); a != before {
			t.Errorf("the second apply wrote %d audit entries", a-before)
		}
		logs.Reset()
		if err := applySchedules(ctx, log, dtq.NewAdmin(c), writeFile(t, strings.Replace(scheduleYAML, "@every 30s", "@every 1m", 1))); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(logs.String(), "created=0 updated=1 unchanged=1") {
			t.Errorf("apply of a changed file logged:\n%s", logs.String())
		}
		if m, err := dtq.NewAdmin(c).GetSchedule(ctx, "", "mine"); err != nil || !m.UpdatedAt.Equal(other.UpdatedAt) {
			t.Errorf("a schedule the file does not name: %+v %v", m, err)
		}
	})
}

func TestSchedulesFileRefusesBadInput(t *testing.T) {
	t.Parallel()
	b := redistest.Embedded(t)
	c, err := dtq.NewClient(redisconn.Wrap(b.Client), &dtq.Config{Namespace: redistest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	for _, tc := range []struct{ body, want string }{
		{"schedules:\n  - name: a\n    cron: '@hourly'\n    task_type: x\n    colour: red\n", "line 5: unknown key colour"},
		{"schedules:\n  - name: a\n    cron: '@hourly'\n    task_type: x\n  - name: a\n    cron: '@daily'\n    task_type: y\n", "default/a is named twice"},
		{"schedules:\n  - name: a\n    cron: '61 * * * *'\n    task_type: x\n", "schedule default/a: dtq: cron \"61 * * * *\""},
		// the good one first: nothing is written when one is refused
		{"schedules:\n  - name: good\n    cron: '@hourly'\n    task_type: x\n  - name: b\n    cron: '@hourly'\n    task_type: x\n    missed: all\n", "schedule default/b: dtq: missed"},
		{"schedules:\n  - name: a\n    cron: '@hourly'\n    task_type: x\n    timeout: soon\n", "line 5: `soon` is not a duration"},
		{"schedules: [", "schedules"},
	} {
		err := applySchedules(t.Context(), log, dtq.NewAdmin(c), writeFile(t, tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--schedules") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want an error containing %q", tc.body, err, tc.want)
		}
	}
	if err := applySchedules(t.Context(), log, dtq.NewAdmin(c), filepath.Join(t.TempDir(), "none.yaml")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a missing file: %v", err)
	}
	if all, _ := dtq.NewAdmin(c).ListSchedules(t.Context(), ""); len(all) != 0 {
		t.Errorf("refused files stored %v", all)
	}
}
