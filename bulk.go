package dtq

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dtq-dev/dtq/internal/store"
	"github.com/dtq-dev/dtq/internal/taskid"
)

// BulkAction is what Bulk does to each task it selects.
type BulkAction string

// The actions of Bulk.
const (
	// BulkCancel cancels each task as Cancel does: a QUEUED or SCHEDULED
	// task is CANCELLED at once, a RUNNING one's cancellation requested.
	BulkCancel BulkAction = "cancel"
	// BulkRequeue requeues each dead letter as Requeue does: a DEAD task
	// in its dead-letter stream is QUEUED again, attempts reset.
	BulkRequeue BulkAction = "requeue"
	// BulkDelete deletes the record of each finished task that is no dead
	// letter: SUCCEEDED, CANCELLED, or DEAD and discarded. Get answers
	// ErrNotFound for it at once rather than after the retention.
	BulkDelete BulkAction = "delete"
)

// statuses are the statuses a task of the action is taken in.
func (a BulkAction) statuses() []Status {
	switch a {
	case BulkCancel:
		return []Status{StatusRunning, StatusQueued, StatusScheduled}
	case BulkRequeue:
		return []Status{StatusDead}
	case BulkDelete:
		return []Status{StatusSucceeded, StatusCancelled}
	}
	return nil
}

// BulkFilter selects tasks of one queue as List's filters do (ListOpts).
type BulkFilter struct {
	Queue string // required
	// Status keeps the tasks of one status ("": every status the action
	// takes: RUNNING, QUEUED and SCHEDULED for a cancel, DEAD for a
	// requeue, SUCCEEDED and CANCELLED for a delete). A status the
	// action never takes is an error.
	Status                      Status
	Type                        string
	IDPrefix                    string
	ErrorContains               string
	CreatedAfter, CreatedBefore time.Time
}

// BulkRequest is one call of Bulk: an action over the tasks of IDs (a
// selection) or of Filter — exactly one of the two.
type BulkRequest struct {
	Action BulkAction
	// IDs are the tasks, at most MaxBulkIDs, each once.
	IDs    []string
	Filter *BulkFilter
	// DryRun counts and changes nothing: Done is 0, Skipped says which
	// would be skipped and why.
	DryRun bool
	// Limit is how many tasks a filter selects at most in this call
	// (1-MaxBulkLimit): More says more match. Defaults to 1,000.
	Limit int
	// Rate is how many tasks per second at most, 0.1-MaxBulkRate.
	// Defaults to 100.
	Rate float64
}

// Bounds of BulkRequest.
const (
	MaxBulkIDs   = 1000
	MaxBulkLimit = 10000
	MaxBulkRate  = 100000
)

// Reasons a task is skipped (BulkSkip.Reason).
const (
	SkipNotFound         = "not_found"         // no such task (unknown, expired or deleted)
	SkipFinished         = "finished"          // cancel: SUCCEEDED or DEAD
	SkipCancelledAlready = "cancelled_already" // cancel: CANCELLED already
	SkipNotDead          = "not_dead"          // requeue: not in the dead-letter stream
	SkipNotFinished      = "not_finished"      // delete: QUEUED, SCHEDULED or RUNNING
	SkipDeadLetter       = "dead_letter"       // delete: DEAD in the dead-letter stream (requeue or discard it)
	SkipChanged          = "changed"           // its state changed meanwhile
)

// BulkSkip is a task Bulk did not act on.
type BulkSkip struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// maxSkipsListed bounds BulkResult.Skipped.
const maxSkipsListed = 100

// BulkResult is what Bulk did.
type BulkResult struct {
	Action BulkAction `json:"action"`
	// Matched counts the tasks selected: the ids, or those the filter
	// matched (up to the limit).
	Matched int `json:"matched"`
	// Done counts the tasks acted on (0 on a dry run).
	Done int `json:"done"`
	// SkippedCount counts the tasks not acted on; Skipped lists the first
	// 100 with their reasons.
	SkippedCount int        `json:"skipped_count"`
	Skipped      []BulkSkip `json:"skipped"`
	DryRun       bool       `json:"dry_run"`
	// More: the filter matches more tasks beyond the limit (call again).
	More bool `json:"more"`
}

func (r *BulkResult) skip(id, reason string) {
	r.SkippedCount++
	if len(r.Skipped) < maxSkipsListed {
		r.Skipped = append(r.Skipped, BulkSkip{ID: id, Reason: reason})
	}
}

// Bulk cancels, requeues or deletes many tasks: those of r.IDs, or those
// r.Filter matches when it starts (up to r.Limit, in List's order), at
// most r.Rate per second. Each task is acted on as the single action does
// (Cancel, Requeue; a delete removes a finished task's record); a task
// the action does not take is skipped with its reason (SkipNotFound …).
// With r.DryRun it only counts. A call that is no dry run is recorded in
// the audit stream once (bulk-cancel, bulk-requeue, bulk-delete), its
// detail naming the selection and the counts. An error midway returns
// the result so far with it.
func (a *Admin) Bulk(ctx context.Context, r BulkRequest) (*BulkResult, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	res := &BulkResult{Action: r.Action, DryRun: r.DryRun, Skipped: []BulkSkip{}}
	ids := r.IDs
	if r.Filter != nil {
		var err error
		if ids, res.More, err = a.bulkMatch(ctx, r); err != nil {
			return nil, err
		}
	}
	res.Matched = len(ids)
	pace := newPacer(r.Rate)
	for start := 0; start < len(ids); {
		n := pace.per
		if r.DryRun {
			n = 500
		}
		end := min(start+n, len(ids))
		if err := a.bulkBatch(ctx, r, ids[start:end], res); err != nil {
			return res, err
		}
		start = end
		if !r.DryRun && start < len(ids) {
			if err := pace.wait(ctx); err != nil {
				return res, err
			}
		}
	}
	if !r.DryRun {
		queue, sel := "", fmt.Sprintf("%d ids", len(r.IDs))
		if f := r.Filter; f != nil {
			queue = f.Queue
			sel = fmt.Sprintf("status=%s type=%q id_prefix=%q error~%q created_after=%s created_before=%s limit=%d",
				orDash(string(f.Status)), f.Type, f.IDPrefix, f.ErrorContains, fmtOpenTime(f.CreatedAfter), fmtOpenTime(f.CreatedBefore), r.Limit)
		}
		a.audit(ctx, bulkAudit[r.Action], queue, "", fmt.Sprintf("%s: %d done of %d matched, %d skipped", sel, res.Done, res.Matched, res.SkippedCount))
	}
	return res, nil
}

var bulkAudit = map[BulkAction]auditAction{BulkCancel: auditBulkCancel, BulkRequeue: auditBulkRequeue, BulkDelete: auditBulkDelete}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// check validates r and fills its defaults.
func (r *BulkRequest) check() error {
	if r.Action.statuses() == nil {
		return invalid("action", "must be cancel, requeue or delete (got %q)", r.Action)
	}
	switch {
	case (r.Filter == nil) == (len(r.IDs) == 0):
		return invalid("ids", "give either ids or a filter (not both, not neither)")
	case len(r.IDs) > MaxBulkIDs:
		return invalid("ids", "must be at most %d (got %d)", MaxBulkIDs, len(r.IDs))
	}
	seen := make(map[string]bool, len(r.IDs))
	for _, id := range r.IDs {
		if seen[id] {
			return invalid("ids", "name %q twice", id)
		}
		seen[id] = true
	}
	switch {
	case r.Limit == 0:
		r.Limit = 1000
	case r.Limit < 0 || r.Limit > MaxBulkLimit:
		return invalid("limit", "must be 1-%d (got %d)", MaxBulkLimit, r.Limit)
	}
	switch {
	case r.Rate == 0:
		r.Rate = 100
	case r.Rate < 0.1 || r.Rate > MaxBulkRate:
		return invalid("rate", "must be 0.1-%d per second (got %v)", MaxBulkRate, r.Rate)
	}
	if f := r.Filter; f != nil {
		if err := checkQueue("queue", f.Queue); err != nil {
			return err
		}
		if f.Status != "" && !f.Status.valid() {
			return invalid("status", "must be one of QUEUED, SCHEDULED, RUNNING, SUCCEEDED, DEAD, CANCELLED (got %q)", f.Status)
		}
		if f.Status != "" && !slicesContains(r.Action.statuses(), f.Status) {
			return invalid("status", "%s takes %s tasks (got %s)", r.Action, joinStatuses(r.Action.statuses()), f.Status)
		}
		if f.Type != "" {
			if err := checkType(f.Type); err != nil {
				return err
			}
		}
		if len(f.IDPrefix) > 128 || !utf8.ValidString(f.IDPrefix) {
			return invalid("id_prefix", "must be valid UTF-8 of at most 128 bytes")
		}
		if len(f.ErrorContains) > 256 || !utf8.ValidString(f.ErrorContains) {
			return invalid("error_contains", "must be valid UTF-8 of at most 256 bytes")
		}
		if !f.CreatedAfter.IsZero() && !f.CreatedBefore.IsZero() && !f.CreatedAfter.Before(f.CreatedBefore) {
			return invalid("created_before", "must be after created_after")
		}
	}
	return nil
}

func slicesContains(ss []Status, s Status) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func joinStatuses(ss []Status) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return strings.Join(out, ", ")
}

// bulkMatch lists the ids r.Filter matches, up to r.Limit, each status
// the action takes in turn (List's sections); more says more match.
func (a *Admin) bulkMatch(ctx context.Context, r BulkRequest) (ids []string, more bool, err error) {
	f := r.Filter
	statuses := r.Action.statuses()
	if f.Status != "" {
		statuses = []Status{f.Status}
	}
	seen := map[string]bool{}
	for _, st := range statuses {
		o := ListOpts{Queue: f.Queue, Status: st, Type: f.Type, IDPrefix: f.IDPrefix, ErrorContains: f.ErrorContains,
			CreatedAfter: f.CreatedAfter, CreatedBefore: f.CreatedBefore, Limit: 500}
		for {
			page, err := (&Client{a.engine}).List(ctx, o)
			if err != nil {
				return nil, false, err
			}
			for _, t := range page.Tasks {
				if seen[t.ID] {
					continue // moved to a later section while listed
				}
				if len(ids) == r.Limit {
					return ids, true, nil
				}
				seen[t.ID] = true
				ids = append(ids, t.ID)
			}
			if page.Next == "" {
				break
			}
			o.Cursor = page.Next
		}
	}
	return ids, false, nil
}

// bulkBatch acts on ids (or, on a dry run, checks them) and counts.
func (a *Admin) bulkBatch(ctx context.Context, r BulkRequest, ids []string, res *BulkResult) error {
	if r.DryRun || r.Action == BulkCancel {
		tasks, err := a.getManyByID(ctx, ids)
		if err != nil {
			return err
		}
		for i, id := range ids {
			reason := bulkReason(r.Action, tasks[i])
			switch {
			case reason != "":
				res.skip(id, reason)
			case r.DryRun:
			default:
				done, err := a.bulkCancel(ctx, id)
				if err != nil {
					return err
				}
				if done != "" {
					res.skip(id, done)
				} else {
					res.Done++
				}
			}
		}
		return nil
	}
	byQueue := map[string][]string{}
	var order []string
	for _, id := range ids {
		queue, _, err := taskid.Parse(id)
		if err != nil {
			res.skip(id, SkipNotFound)
			continue
		}
		if byQueue[queue] == nil {
			order = append(order, queue)
		}
		byQueue[queue] = append(byQueue[queue], id)
	}
	for _, queue := range order {
		qids := byQueue[queue]
		q := a.store.Queue(queue)
		if r.Action == BulkRequeue {
			done, err := q.DLQ(ctx, store.Requeue, qids, a.keepOthers())
			if err != nil {
				return err
			}
			for i, d := range done {
				if d == store.DLQDone {
					res.Done++
					continue
				}
				res.skip(qids[i], a.bulkWhy(ctx, r.Action, qids[i]))
			}
			continue
		}
		got, err := q.DeleteFinished(ctx, qids)
		if err != nil {
			return err
		}
		for i, g := range got {
			switch {
			case g == store.Deleted:
				res.Done++
			case g == string(StatusDead):
				res.skip(qids[i], SkipDeadLetter)
			case g == "":
				res.skip(qids[i], a.bulkWhy(ctx, r.Action, qids[i]))
			default:
				res.skip(qids[i], SkipNotFinished)
			}
		}
	}
	return nil
}

// bulkWhy reads task id to tell why action skipped it.
func (a *Admin) bulkWhy(ctx context.Context, action BulkAction, id string) string {
	t, err := a.get(ctx, id)
	if err != nil {
		return SkipNotFound
	}
	if reason := bulkReason(action, t); reason != "" {
		return reason
	}
	return SkipChanged // it left the state the action took it in meanwhile
}

// bulkReason is why action skips task t ("" when it takes it).
func bulkReason(action BulkAction, t *Task) string {
	if t == nil {
		return SkipNotFound
	}
	switch action {
	case BulkCancel:
		switch t.Status {
		case StatusCancelled:
			return SkipCancelledAlready
		case StatusSucceeded, StatusDead:
			return SkipFinished
		}
	case BulkRequeue:
		if t.Status != StatusDead {
			return SkipNotDead
		}
	case BulkDelete:
		switch {
		case !t.Status.Finished():
			return SkipNotFinished
		case t.Status == StatusDead:
			return SkipDeadLetter // (a dry run's guess: a discarded one is deleted)
		}
	}
	return ""
}

// getManyByID is getMany for ids that need not be task ids (nil for them).
func (c *engine) getManyByID(ctx context.Context, ids []string) ([]*Task, error) {
	var valid []string
	at := make([]int, len(ids))
	for i, id := range ids {
		at[i] = -1
		if _, _, err := taskid.Parse(id); err == nil {
			at[i] = len(valid)
			valid = append(valid, id)
		}
	}
	got, err := c.getMany(ctx, valid)
	if err != nil {
		return nil, err
	}
	out := make([]*Task, len(ids))
	for i := range ids {
		if at[i] >= 0 {
			out[i] = got[at[i]]
		}
	}
	return out, nil
}

// bulkCancel cancels task id as Cancel does, unaudited: "" when cancelled
// (or its cancellation requested), else the reason it was skipped.
func (a *Admin) bulkCancel(ctx context.Context, id string) (string, error) {
	_, status, now, err := a.cancel(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return SkipNotFound, nil
	case errors.Is(err, ErrNotCancellable):
		return SkipFinished, nil
	case err != nil:
		return "", err
	case Status(status) == StatusCancelled && !now:
		return SkipCancelledAlready, nil
	case now:
		// cancelled now: a task awaiting it as its child need not wait
		if t, err := a.get(ctx, id); err == nil {
			a.wakeParent(ctx, t)
		}
	}
	return "", nil
}
