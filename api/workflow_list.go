package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api/wire"
	"github.com/dtq-dev/dtq/internal/wiretime"
)

// listWorkflows: GET /api/v1/workflows?queue=&status=&created_after=
// &created_before=&limit=&cursor= → 200 a page of the queue's workflows,
// newest first (Admin.ListWorkflows).
func (s *Server) listWorkflows(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	queue, err := queueParam(q, dtq.DefaultQueue)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	o := dtq.ListWorkflowsOpts{Queue: queue, Status: dtq.WorkflowStatus(q.Get("status")), Cursor: q.Get("cursor")}
	for _, p := range []struct {
		name string
		to   *time.Time
	}{{"created_after", &o.CreatedAfter}, {"created_before", &o.CreatedBefore}} {
		if v := q.Get(p.name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				s.writeErr(w, r, invalidField(p.name, sprintf("must be an RFC 3339 time, e.g. 2026-12-01T08:00:00Z (got %q)", shorten(json.RawMessage(v)))))
				return
			}
			*p.to = t
		}
	}
	if l := q.Get("limit"); l != "" || q.Has("limit") {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > maxListLimit {
			s.writeErr(w, r, invalidField("limit", sprintf("must be an integer from 1 to %d (got %q)", maxListLimit, l)))
			return
		}
		o.Limit = n
	}
	page, err := s.admin.ListWorkflows(r.Context(), o)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	out := wire.WorkflowPage{Workflows: make([]wire.WorkflowSummary, len(page.Workflows)), NextCursor: page.Next}
	for i, wf := range page.Workflows {
		p := wf.Progress
		out.Workflows[i] = wire.WorkflowSummary{ID: wf.ID, Queue: wf.Queue, Status: string(wf.Status), CancelRequested: wf.CancelRequested,
			Error: wf.Error, Progress: wire.WorkflowProgress{Total: p.Total, Pending: p.Pending, Active: p.Active,
				Succeeded: p.Succeeded, Failed: p.Failed, Cancelled: p.Cancelled, Skipped: p.Skipped},
			CreatedAt: wiretime.Time(wf.CreatedAt), FinishedAt: wiretime.Ptr(wf.FinishedAt)}
	}
	writeJSON(w, http.StatusOK, out)
}
