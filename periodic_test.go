package dtq_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// A schedule is refused with a clear error naming the field.
func TestScheduleValidation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		good := dtq.Schedule{Name: "nightly", Cron: "0 3 * * *", TaskType: "report"}
		for _, c := range []struct {
			name  string
			edit  func(*dtq.Schedule)
			field string
		}{
			{"no name", func(s *dtq.Schedule) { s.Name = "" }, "name"},
			{"bad name", func(s *dtq.Schedule) { s.Name = "a b" }, "name"},
			{"bad cron", func(s *dtq.Schedule) { s.Cron = "every day" }, "cron"},
			{"empty cron", func(s *dtq.Schedule) { s.Cron = "" }, "cron"},
			{"bad zone", func(s *dtq.Schedule) { s.TimeZone = "Nowhere/City" }, "time_zone"},
			{"sub-second every", func(s *dtq.Schedule) { s.Cron = "@every 500ms" }, "cron"},
			{"bad missed", func(s *dtq.Schedule) { s.Missed = "all" }, "missed"},
			{"catch-up bound", func(s *dtq.Schedule) { s.CatchUpMax = dtq.MaxCatchUp + 1 }, "catch_up_max"},
			{"no task type", func(s *dtq.Schedule) { s.TaskType = "" }, "task_type"},
			{"bad payload", func(s *dtq.Schedule) { s.Payload = json.RawMessage(`{`) }, "payload"},
			{"bad priority", func(s *dtq.Schedule) { s.Priority = dtq.Ptr(10) }, "priority"},
			{"bad queue", func(s *dtq.Schedule) { s.Queue = "no/slash" }, "queue"},
		} {
			s := good
			c.edit(&s)
			_, err := e.a.UpsertSchedule(t.Context(), s)
			var ve *dtq.ValidationError
			if !errors.As(err, &ve) || ve.Field != c.field || !errors.Is(err, dtq.ErrInvalid) {
				t.Errorf("%s: err %v, want a ValidationError of field %q", c.name, err, c.field)
			}
		}
		if all, err := e.a.ListSchedules(t.Context(), ""); err != nil || len(all) != 0 {
			t.Errorf("refused schedules were stored: %v %v", all, err)
		}
		if _, err := e.a.GetSchedule(t.Context(), "", "nightly"); !errors.Is(err, dtq.ErrScheduleNotFound) {
			t.Errorf("Get of a missing schedule: %v", err)
		}
		if err := e.a.DeleteSchedule(t.Context(), "", "nightly"); !errors.Is(err, dtq.ErrScheduleNotFound) {
			t.Errorf("Delete of a missing schedule: %v", err)
		}
	})
}

// A schedule of @every 1s served by a worker: each tick's task runs and
// names its schedule and tick; pause stops the ticks, resume starts them
// again, delete removes the schedule and keeps its tasks.
func TestScheduleFiresTasks(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		var mu sync.Mutex
		var ran []*dtq.Task
		e.worker(&dtq.WorkerConfig{Concurrency: 2}, map[string]dtq.HandlerFunc{
			"tick": func(_ context.Context, task *dtq.Task) (any, error) {
				mu.Lock()
				ran = append(ran, task)
				mu.Unlock()
				return nil, nil
			},
		})
		count := func() int { mu.Lock(); defer mu.Unlock(); return len(ran) }
		info, err := e.a.UpsertSchedule(t.Context(), dtq.Schedule{Name: "every", Cron: "@every 1s", TaskType: "tick",
			Payload: json.RawMessage(`{"n":1}`)})
		if err != nil {
			t.Fatal(err)
		}
		if info.NextRun == nil || info.NextRun.UnixMilli()%1000 != 0 || info.Missed != dtq.MissedSkip || info.TimeZone != "UTC" {
			t.Fatalf("stored schedule %+v: want a next run on a whole second, missed skip, UTC", info)
		}
		eventually(t, 10*time.Second, "two ticks run", func() bool { return count() >= 2 })
		mu.Lock()
		first := ran[0]
		mu.Unlock()
		if first.Schedule != "every" || first.ScheduleTick == nil {
			t.Errorf("the handler's task: schedule %q tick %v, want its schedule and tick", first.Schedule, first.ScheduleTick)
		}
		got, err := e.c.Get(t.Context(), first.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Schedule != "every" || got.ScheduleTick == nil || got.ScheduleTick.UnixMilli()%1000 != 0 || string(got.Payload) != `{"n":1}` {
			t.Errorf("fired task %+v: want schedule every, a tick on a whole second, the payload", got)
		}
		info, err = e.a.GetSchedule(t.Context(), "", "every")
		if err != nil || info.LastTaskID == "" || info.LastTick == nil || info.Queue != dtq.DefaultQueue {
			t.Fatalf("after ticks: %+v %v, want the last tick and its task, in the default queue", info, err)
		}

		if err := e.a.PauseSchedule(t.Context(), "", "every"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond) // a tick being fired as it was paused
		paused := count()
		time.Sleep(1500 * time.Millisecond)
		if n := count(); n != paused {
			t.Errorf("paused: %d more tasks ran", n-paused)
		}
		if info, _ := e.a.GetSchedule(t.Context(), "", "every"); info == nil || !info.Paused || info.NextRun != nil {
			t.Errorf("paused schedule: %+v, want paused with no next run", info)
		}
		if err := e.a.ResumeSchedule(t.Context(), "", "every"); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "a tick after the resume", func() bool { return count() > paused })
		if n := count(); n > paused+2 {
			t.Errorf("resume fired %d tasks at once: the ticks missed while paused must not fire", n-paused)
		}

		all, err := e.a.ListSchedules(t.Context(), "")
		if err != nil || len(all) != 1 || all[0].Name != "every" {
			t.Fatalf("list: %+v %v", all, err)
		}
		if err := e.a.DeleteSchedule(t.Context(), "", "every"); err != nil {
			t.Fatal(err)
		}
		deleted := count()
		time.Sleep(1500 * time.Millisecond)
		if n := count(); n > deleted+1 {
			t.Errorf("deleted: %d more tasks ran", n-deleted)
		}
		if _, err := e.c.Get(t.Context(), first.ID); err != nil {
			t.Errorf("a task of the deleted schedule: %v", err)
		}
		if _, err := e.a.GetSchedule(t.Context(), "", "every"); !errors.Is(err, dtq.ErrScheduleNotFound) {
			t.Errorf("deleted schedule: %v", err)
		}
	})
}

// Upserting an existing schedule keeps its creation time and its last
// fired tick; the error of a bad cron names the expression.
func TestScheduleUpsertReplaces(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		a, err := e.a.UpsertSchedule(t.Context(), dtq.Schedule{Name: "s", Cron: "0 3 * * *", TaskType: "x", TimeZone: "Europe/Berlin"})
		if err != nil {
			t.Fatal(err)
		}
		b, err := e.a.UpsertSchedule(t.Context(), dtq.Schedule{Name: "s", Cron: "30 4 * * *", TaskType: "y", TimeZone: "Europe/Berlin",
			Missed: dtq.MissedCatchUp, CatchUpMax: 5})
		if err != nil {
			t.Fatal(err)
		}
		if !b.CreatedAt.Equal(a.CreatedAt) || b.Cron != "30 4 * * *" || b.TaskType != "y" || b.CatchUpMax != 5 {
			t.Errorf("replaced: %+v (was %+v)", b, a)
		}
		loc, _ := time.LoadLocation("Europe/Berlin")
		if n := b.NextRun.In(loc); n.Hour() != 4 || n.Minute() != 30 {
			t.Errorf("next run %v, want 04:30 in Europe/Berlin", n)
		}
		time.Sleep(2 * time.Millisecond)
		same, err := e.a.UpsertSchedule(t.Context(), dtq.Schedule{Name: "s", Cron: "30 4 * * *", TaskType: "y", TimeZone: "Europe/Berlin",
			Missed: dtq.MissedCatchUp, CatchUpMax: 5})
		if err != nil || !same.UpdatedAt.Equal(b.UpdatedAt) {
			t.Errorf("the same definition again: %+v %v, want it unchanged (updated %v)", same, err, b.UpdatedAt)
		}
		_, err = e.a.UpsertSchedule(t.Context(), dtq.Schedule{Name: "s", Cron: "61 * * * *", TaskType: "y"})
		if err == nil || !strings.Contains(err.Error(), "61 * * * *") {
			t.Errorf("bad cron: %v, want an error naming the expression", err)
		}
	})
}
