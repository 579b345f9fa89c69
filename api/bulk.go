package api

import (
	"net/http"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api/wire"
)

// bulk: POST /api/v1/tasks/bulk → 200 {action, matched, done,
// skipped_count, skipped, dry_run, more}.
func (s *Server) bulk(w http.ResponseWriter, r *http.Request) {
	var b wire.BulkRequest
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	req := dtq.BulkRequest{Action: dtq.BulkAction(b.Action), IDs: b.IDs, DryRun: b.DryRun, Limit: 1000, Rate: 100}
	if f := b.Filter; f != nil {
		bf := &dtq.BulkFilter{Queue: dtq.DefaultQueue}
		if f.Queue != nil {
			q, err := queueName(*f.Queue)
			if err != nil {
				s.writeErr(w, r, err)
				return
			}
			bf.Queue = q
		}
		if f.Status != nil {
			bf.Status = dtq.Status(*f.Status)
		}
		if f.TaskType != nil {
			bf.Type = *f.TaskType
		}
		if f.IDPrefix != nil {
			bf.IDPrefix = *f.IDPrefix
		}
		if f.ErrorContains != nil {
			bf.ErrorContains = *f.ErrorContains
		}
		if f.CreatedAfter != nil {
			bf.CreatedAfter = *f.CreatedAfter
		}
		if f.CreatedBefore != nil {
			bf.CreatedBefore = *f.CreatedBefore
		}
		req.Filter = bf
	}
	if given(b.Limit) {
		n, err := intField("limit", b.Limit)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		if n < 1 || n > dtq.MaxBulkLimit {
			s.writeErr(w, r, invalidField("limit", sprintf("must be 1-%d (got %d)", dtq.MaxBulkLimit, n)))
			return
		}
		req.Limit = n
	}
	if given(b.RatePerSecond) {
		d, err := secondsField("rate_per_second", b.RatePerSecond) // a number, read as such
		if err != nil {
			s.writeErr(w, r, invalidField("rate_per_second", sprintf("must be a number (got %s)", shorten(b.RatePerSecond))))
			return
		}
		req.Rate = d.Seconds()
	}
	n := req.Limit
	if req.Filter == nil {
		n = len(req.IDs)
	}
	if !req.DryRun && req.Rate > 0 && time.Duration(float64(n)/req.Rate*float64(time.Second)) > maxHTTPRedrive {
		s.writeErr(w, r, invalidField("limit", sprintf("%d tasks at rate_per_second %v would take over %v: select fewer (a lower limit) or raise the rate, and call again while more is true",
			n, req.Rate, maxHTTPRedrive)))
		return
	}
	if req.Filter != nil && !s.existingQueue(w, r, req.Filter.Queue) {
		return
	}
	res, err := s.admin.Bulk(r.Context(), req)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, bulkOf(res))
}

// bulkOf is a bulk action's result as the API answers it.
func bulkOf(r *dtq.BulkResult) wire.BulkResult {
	out := wire.BulkResult{Action: string(r.Action), Matched: r.Matched, Done: r.Done, SkippedCount: r.SkippedCount,
		DryRun: r.DryRun, More: r.More}
	if r.Skipped != nil {
		out.Skipped = make([]wire.BulkSkip, len(r.Skipped))
		for i, s := range r.Skipped {
			out.Skipped[i] = wire.BulkSkip{ID: s.ID, Reason: s.Reason}
		}
	}
	return out
}
