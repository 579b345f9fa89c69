package api

import (
	"context"
	"net/http"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api/wire"
)

// scheduleFrom turns a body into the engine's Schedule, naming a bad field
// (the ranges are the engine's to check).
func scheduleFrom(b *wire.ScheduleBody, queue, name string) (dtq.Schedule, error) {
	s := dtq.Schedule{Name: name, Queue: queue, TimeZone: b.TimeZone, Payload: b.Payload,
		Missed: dtq.MissedTicks(b.Missed), Paused: b.Paused}
	if b.Cron == nil {
		return s, invalidField("cron", "is required")
	}
	if b.TaskType == nil {
		return s, invalidField("task_type", "is required")
	}
	s.Cron, s.TaskType = *b.Cron, *b.TaskType
	if given(b.Priority) {
		p, err := intField("priority", b.Priority)
		if err != nil {
			return s, err
		}
		s.Priority = &p
	}
	if given(b.MaxAttempts) {
		n, err := intField("max_attempts", b.MaxAttempts)
		if err != nil {
			return s, err
		}
		if n == 0 {
			return s, invalidField("max_attempts", "must not be 0 (leave it out for the default)")
		}
		s.MaxAttempts = n
	}
	if given(b.TimeoutSeconds) {
		d, err := secondsField("timeout_seconds", b.TimeoutSeconds)
		if err != nil {
			return s, err
		}
		if d == 0 {
			return s, invalidField("timeout_seconds", "must not be 0 (leave it out for the default)")
		}
		s.Timeout = d
	}
	if given(b.CatchUpMax) {
		n, err := intField("catch_up_max", b.CatchUpMax)
		if err != nil {
			return s, err
		}
		s.CatchUpMax = n
	}
	return s, nil
}

// listSchedules: GET /api/v1/schedules?queue= (every queue's without it).
func (s *Server) listSchedules(w http.ResponseWriter, r *http.Request) {
	queues, err := s.queuesOf(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	out := wire.ScheduleList{Schedules: []wire.Schedule{}}
	for _, q := range queues {
		list, err := s.admin.ListSchedules(r.Context(), q)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		for i := range list {
			out.Schedules = append(out.Schedules, scheduleOf(&list[i]))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getSchedule(w http.ResponseWriter, r *http.Request) {
	in, err := s.admin.GetSchedule(r.Context(), r.PathValue("queue"), r.PathValue("name"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, scheduleOf(in))
}

// putSchedule: PUT /api/v1/schedules/{queue}/{name} creates (201) or
// replaces (200) the schedule.
func (s *Server) putSchedule(w http.ResponseWriter, r *http.Request) {
	var b wire.ScheduleBody
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	queue, name := r.PathValue("queue"), r.PathValue("name")
	sc, err := scheduleFrom(&b, queue, name)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	_, err = s.admin.GetSchedule(r.Context(), queue, name)
	existed := err == nil
	in, err := s.admin.UpsertSchedule(r.Context(), sc)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	status := http.StatusOK
	if !existed {
		status = http.StatusCreated
		w.Header().Set("Location", "/api/v1/schedules/"+queue+"/"+name)
	}
	writeJSON(w, status, scheduleOf(in))
}

func (s *Server) deleteSchedule(w http.ResponseWriter, r *http.Request) {
	if err := s.admin.DeleteSchedule(r.Context(), r.PathValue("queue"), r.PathValue("name")); err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.ScheduleDeleted{Deleted: r.PathValue("name")})
}

func (s *Server) pauseSchedule(w http.ResponseWriter, r *http.Request) {
	s.scheduleAction(w, r, s.admin.PauseSchedule)
}

func (s *Server) resumeSchedule(w http.ResponseWriter, r *http.Request) {
	s.scheduleAction(w, r, s.admin.ResumeSchedule)
}

func (s *Server) scheduleAction(w http.ResponseWriter, r *http.Request, act func(ctx context.Context, queue, name string) error) {
	queue, name := r.PathValue("queue"), r.PathValue("name")
	if err := act(r.Context(), queue, name); err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.getSchedule(w, r)
}
