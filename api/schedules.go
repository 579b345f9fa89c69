package api

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/wiretime"
)

// scheduleBody is the body of PUT /api/v1/schedules/{queue}/{name}: the
// schedule, its name and queue given by the path.
type scheduleBody struct {
	Cron           *string         `json:"cron"`
	TimeZone       string          `json:"time_zone"`
	TaskType       *string         `json:"task_type"`
	Payload        json.RawMessage `json:"payload"`
	Priority       json.RawMessage `json:"priority"`
	MaxAttempts    json.RawMessage `json:"max_attempts"`
	TimeoutSeconds json.RawMessage `json:"timeout_seconds"`
	Missed         string          `json:"missed"`
	CatchUpMax     json.RawMessage `json:"catch_up_max"`
	Paused         bool            `json:"paused"`
}

// scheduleJSON is a schedule as the API answers it.
type scheduleJSON struct {
	Name           string          `json:"name"`
	Queue          string          `json:"queue"`
	Cron           string          `json:"cron"`
	TimeZone       string          `json:"time_zone"`
	TaskType       string          `json:"task_type"`
	Payload        json.RawMessage `json:"payload"`
	Priority       int             `json:"priority"`
	MaxAttempts    int             `json:"max_attempts"`
	TimeoutSeconds float64         `json:"timeout_seconds"`
	Missed         string          `json:"missed"`
	CatchUpMax     int             `json:"catch_up_max"`
	Paused         bool            `json:"paused"`
	CreatedAt      wiretime.Time   `json:"created_at"`
	UpdatedAt      wiretime.Time   `json:"updated_at"`
	NextRun        *wiretime.Time  `json:"next_run,omitempty"`
	LastTick       *wiretime.Time  `json:"last_tick,omitempty"`
	LastTaskID     string          `json:"last_task_id,omitempty"`
}

func scheduleOf(in *dtq.ScheduleInfo) scheduleJSON {
	prio := dtq.DefaultPriority
	if in.Priority != nil {
		prio = *in.Priority
	}
	payload := in.Payload
	if payload == nil {
		payload = json.RawMessage("null")
	}
	return scheduleJSON{Name: in.Name, Queue: in.Queue, Cron: in.Cron, TimeZone: in.TimeZone, TaskType: in.TaskType,
		Payload: payload, Priority: prio, MaxAttempts: in.MaxAttempts, TimeoutSeconds: in.Timeout.Seconds(),
		Missed: string(in.Missed), CatchUpMax: in.CatchUpMax, Paused: in.Paused, CreatedAt: wiretime.Time(in.CreatedAt),
		UpdatedAt: wiretime.Time(in.UpdatedAt), NextRun: wiretime.Ptr(in.NextRun), LastTick: wiretime.Ptr(in.LastTick), LastTaskID: in.LastTaskID}
}

// schedule turns a body into the engine's Schedule, naming a bad field
// (the ranges are the engine's to check).
func (b *scheduleBody) schedule(queue, name string) (dtq.Schedule, error) {
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
	out := []scheduleJSON{}
	for _, q := range queues {
		list, err := s.admin.ListSchedules(r.Context(), q)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		for i := range list {
			out = append(out, scheduleOf(&list[i]))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"schedules": out})
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
	var b scheduleBody
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	queue, name := r.PathValue("queue"), r.PathValue("name")
	sc, err := b.schedule(queue, name)
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
	writeJSON(w, http.StatusOK, map[string]string{"deleted": r.PathValue("name")})
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
