package api

import (
	"encoding/json"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api/wire"
	"github.com/dtq-dev/dtq/internal/wiretime"
)

// The engine's values (package dtq) as the API answers them, in the types
// of package wire. For a type whose JSON the engine writes too (Task,
// Workflow, …) the two are the same bytes (TestWireMatchesEngineJSON); a
// nil slice stays nil and an empty one empty, as their JSON differs.
// Limits and schedules have a shape of their own over HTTP (seconds for
// durations, every field of a schedule written).

// taskOf is t as the API answers it (nil for nil).
func taskOf(t *dtq.Task) *wire.Task {
	if t == nil {
		return nil
	}
	w := &wire.Task{ID: t.ID, Queue: t.Queue, TaskType: t.Type, Payload: t.Payload, Priority: t.Priority, Status: string(t.Status),
		Attempt: t.Attempt, MaxAttempts: t.MaxAttempts, Crashes: t.Crashes, Result: t.Result, LastError: t.LastError, Worker: t.Worker,
		CancelRequested: t.CancelRequested, Schedule: t.Schedule, Group: t.Group, GroupWaiting: t.GroupWaiting,
		LimitKey: t.LimitKey, OrderKey: t.OrderKey, OrderWaiting: t.OrderWaiting, HeldBy: t.HeldBy, Workflow: t.Workflow, WorkflowNode: t.WorkflowNode, Previous: t.Previous,
		TraceParent: t.TraceParent, TraceID: t.TraceID, Progress: progressOf(t.Progress), Suspended: suspensionOf(t.Suspended), Duplicate: t.Duplicate, Debounced: t.Debounced, TimeoutSeconds: t.Timeout.Seconds(),
		CreatedAt: wiretime.Time(t.CreatedAt), ScheduledAt: wiretime.Ptr(t.ScheduledAt), StartedAt: wiretime.Ptr(t.StartedAt),
		FinishedAt: wiretime.Ptr(t.FinishedAt), ScheduleTick: wiretime.Ptr(t.ScheduleTick)}
	if t.Steps != nil {
		w.Steps = make([]wire.TaskStep, len(t.Steps))
		for i, st := range t.Steps {
			w.Steps[i] = wire.TaskStep{Name: st.Name, Run: st.Run, At: wiretime.Time(st.At), Result: st.Result, By: st.By}
		}
	}
	if t.History != nil {
		w.History = make([]wire.Execution, len(t.History))
		for i, x := range t.History {
			w.History[i] = wire.Execution{Run: x.Run, Worker: x.Worker, Outcome: string(x.Outcome), Error: x.Error,
				StartedAt: wiretime.Time(x.StartedAt), FinishedAt: wiretime.Time(x.FinishedAt)}
		}
	}
	return w
}

// tasksOf is ts as the API answers them.
func tasksOf(ts []*dtq.Task) []*wire.Task {
	if ts == nil {
		return nil
	}
	out := make([]*wire.Task, len(ts))
	for i, t := range ts {
		out[i] = taskOf(t)
	}
	return out
}

// taskPageOf is a page of GET /api/v1/tasks.
func taskPageOf(p *dtq.TaskPage) wire.TaskPage {
	return wire.TaskPage{Tasks: tasksOf(p.Tasks), NextCursor: p.Next}
}

func progressOf(p *dtq.TaskProgress) *wire.TaskProgress {
	if p == nil {
		return nil
	}
	return &wire.TaskProgress{Fraction: p.Fraction, Note: p.Note, At: wiretime.Time(p.At)}
}

// suspensionOf is s on the wire (nil for none).
func suspensionOf(s *dtq.Suspension) *wire.Suspension {
	if s == nil {
		return nil
	}
	return &wire.Suspension{For: s.For, Name: s.Name, Until: wiretime.Time(s.Until)}
}

// eventOf is e as a frame of GET /ws/events.
func eventOf(e *dtq.Event) wire.Event {
	return wire.Event{Queue: e.Queue, TaskID: e.TaskID, Status: string(e.Status), TaskType: e.Type, Attempt: e.Attempt,
		Priority: e.Priority, Error: e.Error, Progress: progressOf(e.Progress), Suspended: suspensionOf(e.Suspended),
		Time: wiretime.Time(e.Time)}
}

func deadLetterOf(d *dtq.DeadLetter) wire.DeadLetter {
	return wire.DeadLetter{Task: taskOf(d.Task), Reason: d.Reason, DeadAt: wiretime.Time(d.DeadAt)}
}

func queueStatsOf(q *dtq.QueueStats) wire.QueueStats {
	return wire.QueueStats{Name: q.Name, Paused: q.Paused, Queued: q.Queued, Scheduled: q.Scheduled, Running: q.Running,
		Dead: q.Dead, QueuedByPriority: q.QueuedByPriority[:], GroupWaiting: q.GroupWaiting, LimitWaiting: q.LimitWaiting,
		OrderWaiting: q.OrderWaiting,
		Suspended:    q.Suspended, SubmittedTotal: q.Submitted, SucceededTotal: q.Succeeded, RetriedTotal: q.Retried, DeadTotal: q.Failed,
		CancelledTotal: q.Cancelled}
}

func deletedOf(d *dtq.DeletedQueue) wire.DeletedQueue {
	return wire.DeletedQueue{Queue: d.Queue, Queued: d.Queued, Scheduled: d.Scheduled, Running: d.Running, Dead: d.Dead}
}

func groupOf(g *dtq.GroupInfo) wire.GroupWeight {
	waiting := g.Waiting
	return wire.GroupWeight{Group: g.Group, Weight: g.Weight, Waiting: &waiting}
}

func workerOf(w *dtq.WorkerInfo) wire.WorkerInfo {
	return wire.WorkerInfo{ID: w.ID, Host: w.Host, PID: w.PID, Queues: w.Queues, Concurrency: w.Concurrency, Busy: w.Busy,
		Kind: w.Kind, Library: w.Library, StartedAt: wiretime.Time(w.StartedAt), LastHeartbeat: wiretime.Time(w.LastHeartbeat),
		State: w.State, Requested: w.Requested}
}

func auditOf(e *dtq.AuditEntry) wire.AuditEntry {
	return wire.AuditEntry{ID: e.ID, Action: e.Action, Queue: e.Queue, TaskID: e.TaskID, Detail: e.Detail, Time: wiretime.Time(e.Time)}
}

func redriveOf(r *dtq.RedriveResult) wire.RedriveResult {
	return wire.RedriveResult{Matched: r.Matched, Requeued: r.Requeued, DryRun: r.DryRun, More: r.More}
}

// leaseOf is a task lease as POST /api/v1/leases answers it.
func leaseOf(l *dtq.Lease) *wire.Lease {
	return &wire.Lease{Token: l.Token, Task: taskOf(l.Task), Deadline: wiretime.Time(l.Deadline)}
}

// workflowOf is wf as the API answers it.
func workflowOf(wf *dtq.Workflow) *wire.Workflow {
	p := wf.Progress
	return &wire.Workflow{ID: wf.ID, Queue: wf.Queue, Status: string(wf.Status), CancelRequested: wf.CancelRequested,
		Result: wf.Result, Error: wf.Error, Progress: wire.WorkflowProgress{Total: p.Total, Pending: p.Pending, Active: p.Active,
			Succeeded: p.Succeeded, Failed: p.Failed, Cancelled: p.Cancelled, Skipped: p.Skipped},
		Root: nodeOf(wf.Root), Duplicate: wf.Duplicate, CreatedAt: wiretime.Time(wf.CreatedAt), FinishedAt: wiretime.Ptr(wf.FinishedAt)}
}

func nodeOf(n *dtq.WorkflowNode) *wire.WorkflowNode {
	if n == nil {
		return nil
	}
	return &wire.WorkflowNode{Node: n.Node, Kind: n.Kind, Status: n.Status, TaskID: n.TaskID, TaskType: n.TaskType,
		Result: n.Result, Error: n.Error, Nodes: nodesOf(n.Nodes), Children: nodesOf(n.Children),
		OnSuccess: nodeOf(n.OnSuccess), OnComplete: nodeOf(n.OnComplete)}
}

func nodesOf(ns []*dtq.WorkflowNode) []*wire.WorkflowNode {
	if ns == nil {
		return nil
	}
	out := make([]*wire.WorkflowNode, len(ns))
	for i, n := range ns {
		out[i] = nodeOf(n)
	}
	return out
}

// limitOf is a queue's limits as the API answers them.
func limitOf(l *dtq.LimitInfo) wire.Limit {
	v := wire.Limit{Queue: l.Queue, MaxRunning: l.MaxRunning, InUse: l.InUse, Rate: l.Rate, PerSeconds: l.Per.Seconds(),
		Burst: l.Burst, PausedUntil: wiretime.Ptr(l.PausedUntil)}
	for _, s := range l.Scopes {
		sv := wire.ScopeLimit{TaskType: s.TaskType, LimitKey: s.LimitKey, MaxRunning: s.MaxRunning, InUse: s.InUse, Waiting: s.Waiting,
			Rate: s.Rate, Burst: s.Burst, PausedUntil: wiretime.Ptr(s.PausedUntil), OnFull: string(s.OnFull)}
		if s.Rate > 0 {
			sv.PerSeconds = s.Per.Seconds()
		}
		v.Scopes = append(v.Scopes, sv)
	}
	return v
}

// scheduleOf is a schedule as the API answers it.
func scheduleOf(in *dtq.ScheduleInfo) wire.Schedule {
	prio := dtq.DefaultPriority
	if in.Priority != nil {
		prio = *in.Priority
	}
	payload := in.Payload
	if payload == nil {
		payload = json.RawMessage("null")
	}
	return wire.Schedule{Name: in.Name, Queue: in.Queue, Cron: in.Cron, TimeZone: in.TimeZone, TaskType: in.TaskType,
		Payload: payload, Priority: prio, MaxAttempts: in.MaxAttempts, TimeoutSeconds: in.Timeout.Seconds(),
		Missed: string(in.Missed), CatchUpMax: in.CatchUpMax, Paused: in.Paused, CreatedAt: wiretime.Time(in.CreatedAt),
		UpdatedAt: wiretime.Time(in.UpdatedAt), NextRun: wiretime.Ptr(in.NextRun), LastTick: wiretime.Ptr(in.LastTick), LastTaskID: in.LastTaskID}
}
