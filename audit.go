package dtq

import (
	"context"
	"time"

	"github.com/dtq-dev/dtq/internal/store"
)

// auditAction is the action of an audit entry (AuditEntry.Action): one of
// the constants below, which AuditActions lists.
type auditAction string

// The actions the audit stream records.
const (
	auditCancel         auditAction = "cancel"          // Cancel; detail: the task's status before
	auditRequeue        auditAction = "requeue"         // Requeue
	auditDiscard        auditAction = "discard"         // Discard
	auditDiscardAll     auditAction = "discard-all"     // Purge; detail: how many
	auditRedrive        auditAction = "redrive"         // Redrive (not a dry run); detail: the filter and counts
	auditPause          auditAction = "pause"           // PauseQueue
	auditResume         auditAction = "resume"          // ResumeQueue
	auditQueueDelete    auditAction = "queue-delete"    // DeleteQueue; detail: force, what it held
	auditLimitSet       auditAction = "limit-set"       // the Set*Limits and Clear*Limits calls; detail: the limits
	auditGroupWeight    auditAction = "group-weight"    // SetGroupWeight; detail: group and weight
	auditScheduleUpsert auditAction = "schedule-upsert" // UpsertSchedule; detail: the name
	auditScheduleDelete auditAction = "schedule-delete" // DeleteSchedule; detail: the name
	auditSchedulePause  auditAction = "schedule-pause"  // PauseSchedule; detail: the name
	auditScheduleResume auditAction = "schedule-resume" // ResumeSchedule; detail: the name
	auditWorkflow       auditAction = "workflow"        // EnqueueWorkflow; detail: the nodes
	auditCancelWorkflow auditAction = "cancel_workflow" // CancelWorkflow of a running one; detail: its active nodes
	auditRunNow         auditAction = "run-now"         // RunNow; detail: the task's type
	auditBulkCancel     auditAction = "bulk-cancel"     // Bulk cancel; detail: the selection and counts
	auditBulkRequeue    auditAction = "bulk-requeue"    // Bulk requeue; detail: the selection and counts
	auditBulkDelete     auditAction = "bulk-delete"     // Bulk delete; detail: the selection and counts
	auditWorkerQuiet    auditAction = "worker-quiet"    // QuietWorker; detail: the worker's id
	auditWorkerStop     auditAction = "worker-stop"     // StopWorker; detail: the worker's id
)

// auditActions are the actions, in the order AuditActions gives them.
var auditActions = []auditAction{
	auditCancel, auditRequeue, auditDiscard, auditDiscardAll, auditRedrive,
	auditPause, auditResume, auditQueueDelete, auditLimitSet, auditGroupWeight,
	auditScheduleUpsert, auditScheduleDelete, auditSchedulePause, auditScheduleResume,
	auditWorkflow, auditCancelWorkflow, auditRunNow, auditBulkCancel, auditBulkRequeue, auditBulkDelete,
	auditWorkerQuiet, auditWorkerStop,
}

// AuditActions returns every action the audit stream records (the values
// of AuditEntry.Action), in the order the docs list them.
func AuditActions() []string {
	out := make([]string, len(auditActions))
	for i, a := range auditActions {
		out[i] = string(a)
	}
	return out
}

// dlqAudit is the action of a dead-letter action on one task.
func dlqAudit(action store.DLQAction) auditAction {
	if action == store.Requeue {
		return auditRequeue
	}
	return auditDiscard
}

// AuditEntry is one admin action.
type AuditEntry struct {
	ID   string    `json:"id"`
	Time time.Time `json:"time"`
	// Action is what was done: one of AuditActions.
	Action string `json:"action"`
	Queue  string `json:"queue,omitempty"`
	TaskID string `json:"task_id,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// audit records an admin action; failures are logged, not returned (the
// action itself happened).
func (c *engine) audit(ctx context.Context, action auditAction, queue, task, detail string) {
	err := c.store.Audit(ctx, c.cfg.AuditMaxLen, store.AuditRecord{Action: string(action), Queue: queue, TaskID: task, Detail: detail})
	if err != nil {
		c.log.Warn("recording an audit entry failed", "action", string(action), logQueue, queue, logTaskID, task, "error", err)
	}
}

// Audit returns up to limit admin actions, newest first.
func (a *Admin) Audit(ctx context.Context, limit int) ([]AuditEntry, error) {
	if limit <= 0 || limit > 1000 {
		return nil, invalid("limit", "must be 1-1000 (got %d)", limit)
	}
	rs, err := a.store.ReadAudit(ctx, limit)
	if err != nil {
		return nil, err
	}
	out := make([]AuditEntry, len(rs))
	for i, a := range rs {
		out[i] = AuditEntry{ID: a.EntryID, Time: time.UnixMilli(a.At).UTC(), Action: a.Action, Queue: a.Queue, TaskID: a.TaskID, Detail: a.Detail}
	}
	return out, nil
}
