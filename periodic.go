package dtq

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/periodic"
	"github.com/dtq-dev/dtq/internal/store"
)

// MissedTicks says which ticks of a schedule fire after an outage (no
// worker of its queue ran, or the schedule's scheduler was down).
type MissedTicks string

// Missed-tick policies.
const (
	// MissedSkip (the default) fires once, for the latest missed tick.
	MissedSkip MissedTicks = "skip"
	// MissedCatchUp fires every missed tick, oldest first, up to
	// Schedule.CatchUpMax of them (the latest ones; default and bound
	// MaxCatchUp).
	MissedCatchUp MissedTicks = "catch_up"
)

// MaxCatchUp bounds the missed ticks a catch-up fires.
const MaxCatchUp = periodic.MaxCatchUp

// Schedule is a periodic task: at every tick of Cron, read in TimeZone,
// the queue's scheduler creates one task of TaskType with Payload —
// exactly one per tick, however many workers run the queue.
type Schedule struct {
	// Name identifies the schedule in its queue (the rules of queue
	// names: 1-64 of A-Z a-z 0-9 _ . -).
	Name string `json:"name"`
	// Queue is where the schedule lives and its tasks go ("default").
	Queue string `json:"queue"`
	// Cron is 5 fields (minute hour day-of-month month day-of-week), or 6
	// with a leading seconds field, or a descriptor: @yearly, @monthly,
	// @weekly, @daily, @hourly, @every <duration> (whole seconds, ≥ 1s,
	// ticking on multiples of it since the Unix epoch).
	Cron string `json:"cron"`
	// TimeZone is an IANA zone name; "" is UTC.
	TimeZone string `json:"time_zone,omitempty"`

	// The task each tick creates; the limits and defaults of Enqueue.
	TaskType    string          `json:"task_type"`
	Payload     json.RawMessage `json:"payload,omitempty"`
	Priority    *int            `json:"priority,omitempty"`
	MaxAttempts int             `json:"max_attempts,omitempty"`
	Timeout     time.Duration   `json:"-"`

	// Missed is the missed-tick policy ("" is MissedSkip); CatchUpMax
	// bounds MissedCatchUp (0 is MaxCatchUp).
	Missed     MissedTicks `json:"missed,omitempty"`
	CatchUpMax int         `json:"catch_up_max,omitempty"`
	// Paused schedules fire nothing; resuming skips the ticks missed
	// meanwhile.
	Paused bool `json:"paused,omitempty"`
}

// ScheduleInfo is a stored schedule and its state.
type ScheduleInfo struct {
	Schedule
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// NextRun is the next tick, unset while paused.
	NextRun *time.Time `json:"next_run,omitempty"`
	// LastTick is the last tick that fired, and LastTaskID the task it
	// created; unset before the first.
	LastTick   *time.Time `json:"last_tick,omitempty"`
	LastTaskID string     `json:"last_task_id,omitempty"`
}

// UpsertSchedule creates the schedule s.Name of s.Queue or replaces its
// definition. A new schedule's first tick is the first after now; a
// changed one keeps its last fired tick (a tick fires once, whatever the
// changes); an unchanged one is not written (its UpdatedAt stays). It
// returns the schedule as stored.
func (a *Admin) UpsertSchedule(ctx context.Context, s Schedule) (*ScheduleInfo, error) {
	if s.Queue == "" {
		s.Queue = DefaultQueue
	}
	def, spec, err := a.scheduleDef(s)
	if err != nil {
		return nil, err
	}
	if err := a.register(ctx, a.queue(s.Queue)); err != nil {
		return nil, err
	}
	q := a.store.Queue(s.Queue)
	now, err := q.Now(ctx)
	if err != nil {
		return nil, err
	}
	_, old, err := a.scheduleState(ctx, s.Queue, s.Name)
	if err != nil && !errors.Is(err, ErrScheduleNotFound) {
		return nil, err
	}
	if old != nil && sameDef(old.Def, def) {
		return scheduleInfo(s.Queue, old), nil // nothing changes: nothing is written
	}
	def.Created, def.Updated = now, now
	restart := false
	if old != nil {
		def.Created = old.Def.Created
		// unpaused by its new definition: as a resume, from now
		restart = old.Def.Paused && !def.Paused
	}
	if _, err := q.PutSchedule(ctx, def, nextTick(spec, def, now), now, restart); err != nil {
		return nil, err
	}
	a.audit(ctx, auditScheduleUpsert, s.Queue, "", s.Name)
	return a.GetSchedule(ctx, s.Queue, s.Name)
}

// sameDef reports whether two definitions differ at most in their times.
func sameDef(a, b store.ScheduleDef) bool {
	a.Created, a.Updated, b.Created, b.Updated = 0, 0, 0, 0
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// CheckSchedule validates s as UpsertSchedule would, writing nothing: a
// *ValidationError names the field at fault.
func (a *Admin) CheckSchedule(s Schedule) error {
	if s.Queue == "" {
		s.Queue = DefaultQueue
	}
	_, _, err := a.scheduleDef(s)
	return err
}

// nextTick is the next tick of def after now, 0 when paused (or never).
func nextTick(spec *periodic.Spec, def store.ScheduleDef, now int64) int64 {
	if def.Paused {
		return 0
	}
	n := spec.Next(time.UnixMilli(now))
	if n.IsZero() {
		return 0
	}
	return n.UnixMilli()
}

// scheduleDef validates s (filling its defaults) into the stored form.
func (c *engine) scheduleDef(s Schedule) (store.ScheduleDef, *periodic.Spec, error) {
	var def store.ScheduleDef
	if s.Queue == "" {
		s.Queue = DefaultQueue
	}
	if err := keys.CheckName("schedule name", s.Name); err != nil {
		return def, nil, invalid("name", "%v", err)
	}
	spec, err := periodic.Parse(s.Cron, s.TimeZone)
	var pe *periodic.Error
	if errors.As(err, &pe) {
		return def, nil, invalid(pe.Field, "%s", pe.Problem)
	} else if err != nil {
		return def, nil, err
	}
	switch s.Missed {
	case "":
		s.Missed = MissedSkip
	case MissedSkip, MissedCatchUp:
	default:
		return def, nil, invalid("missed", "must be %q or %q (got %q)", MissedSkip, MissedCatchUp, s.Missed)
	}
	if s.CatchUpMax < 0 || s.CatchUpMax > MaxCatchUp {
		return def, nil, invalid("catch_up_max", "must be from 0 to %d (got %d)", MaxCatchUp, s.CatchUpMax)
	}
	var payload any = s.Payload
	if s.Payload == nil {
		payload = nil
	}
	_, item, err := c.prepare(s.TaskType, payload, &EnqueueOpts{Queue: s.Queue, Priority: s.Priority,
		MaxAttempts: s.MaxAttempts, Timeout: s.Timeout})
	if err != nil {
		return def, nil, err
	}
	tz := s.TimeZone
	if tz == "" {
		tz = "UTC"
	}
	def = store.ScheduleDef{Name: s.Name, Cron: spec.String(), TimeZone: tz, Type: item.Type,
		Payload: json.RawMessage(item.Payload), Priority: item.Priority, MaxAtt: item.MaxAttempts,
		TimeoutMs: item.Timeout.Milliseconds(), Missed: string(s.Missed), CatchUpMax: s.CatchUpMax, Paused: s.Paused}
	return def, spec, nil
}

// GetSchedule returns schedule name of queue.
func (a *Admin) GetSchedule(ctx context.Context, queue, name string) (*ScheduleInfo, error) {
	queue, st, err := a.scheduleState(ctx, queue, name)
	if err != nil {
		return nil, err
	}
	return scheduleInfo(queue, st), nil
}

// scheduleQueue returns the name of a schedule's queue ("" is the
// default queue), or the error that refuses it.
func scheduleQueue(queue string) (string, error) {
	if queue == "" {
		queue = DefaultQueue
	}
	if err := checkQueue("queue", queue); err != nil {
		return queue, err
	}
	return queue, nil
}

// scheduleRef returns the name of a schedule's queue ("" is the default
// queue), or the error that refuses the queue's or the schedule's name.
func scheduleRef(queue, name string) (string, error) {
	queue, err := scheduleQueue(queue)
	if err != nil {
		return queue, err
	}
	if err := keys.CheckName("schedule name", name); err != nil {
		return queue, invalid("name", "%v", err)
	}
	return queue, nil
}

// scheduleState reads schedule name of queue, with the queue's name.
func (c *engine) scheduleState(ctx context.Context, queue, name string) (string, *store.ScheduleState, error) {
	queue, err := scheduleRef(queue, name)
	if err != nil {
		return queue, nil, err
	}
	st, ok, err := c.store.Queue(queue).Schedule(ctx, name)
	if err != nil {
		return queue, nil, err
	}
	if !ok {
		return queue, nil, ErrScheduleNotFound
	}
	return queue, &st, nil
}

// ListSchedules returns the schedules of queue, by name.
func (a *Admin) ListSchedules(ctx context.Context, queue string) ([]ScheduleInfo, error) {
	queue, err := scheduleQueue(queue)
	if err != nil {
		return nil, err
	}
	all, err := a.store.Queue(queue).Schedules(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]ScheduleInfo, len(all))
	for i := range all {
		out[i] = *scheduleInfo(queue, &all[i])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func scheduleInfo(queue string, st *store.ScheduleState) *ScheduleInfo {
	d := st.Def
	prio := d.Priority
	info := &ScheduleInfo{
		Schedule: Schedule{Name: d.Name, Queue: queue, Cron: d.Cron, TimeZone: d.TimeZone, TaskType: d.Type,
			Payload: d.Payload, Priority: &prio, MaxAttempts: d.MaxAtt, Timeout: time.Duration(d.TimeoutMs) * time.Millisecond,
			Missed: MissedTicks(d.Missed), CatchUpMax: d.CatchUpMax, Paused: d.Paused},
		CreatedAt:  msTime(d.Created),
		UpdatedAt:  msTime(d.Updated),
		NextRun:    msTimePtr(st.Next),
		LastTaskID: st.LastTaskID,
	}
	if st.LastTaskID != "" {
		info.LastTick = msTimePtr(st.LastTick)
	}
	return info
}

// DeleteSchedule deletes schedule name of queue; the tasks it created
// stay.
func (a *Admin) DeleteSchedule(ctx context.Context, queue, name string) error {
	queue, err := scheduleRef(queue, name)
	if err != nil {
		return err
	}
	existed, err := a.store.Queue(queue).DeleteSchedule(ctx, name)
	if err != nil {
		return err
	}
	if !existed {
		return ErrScheduleNotFound
	}
	a.audit(ctx, auditScheduleDelete, queue, "", name)
	return nil
}

// PauseSchedule stops schedule name of queue from firing.
func (a *Admin) PauseSchedule(ctx context.Context, queue, name string) error {
	return a.setSchedulePaused(ctx, queue, name, true)
}

// ResumeSchedule lets a paused schedule fire again from its next tick
// after now: the ticks missed while it was paused do not fire.
func (a *Admin) ResumeSchedule(ctx context.Context, queue, name string) error {
	return a.setSchedulePaused(ctx, queue, name, false)
}

func (c *engine) setSchedulePaused(ctx context.Context, queue, name string, paused bool) error {
	queue, st, err := c.scheduleState(ctx, queue, name)
	if err != nil {
		return err
	}
	q := c.store.Queue(queue)
	now, err := q.Now(ctx)
	if err != nil {
		return err
	}
	def := st.Def
	wasPaused := def.Paused
	def.Paused, def.Updated = paused, now
	spec, err := periodic.Parse(def.Cron, def.TimeZone)
	if err != nil {
		return err
	}
	// A resume restarts from now: what was missed while paused is skipped.
	if _, err := q.PutSchedule(ctx, def, nextTick(spec, def, now), now, wasPaused && !paused); err != nil {
		return err
	}
	action := auditScheduleResume
	if paused {
		action = auditSchedulePause
	}
	c.audit(ctx, action, queue, "", name)
	return nil
}
