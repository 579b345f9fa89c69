package api

import (
	"net/http"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api/wire"
)

// maxHTTPRedrive bounds how long one redrive over HTTP may take (limit /
// rate), under the server's 30 s write timeout.
const maxHTTPRedrive = 20 * time.Second

// redrive: POST /api/v1/dlq/redrive → 200 {matched, requeued, dry_run, more}.
func (s *Server) redrive(w http.ResponseWriter, r *http.Request) {
	var b wire.RedriveRequest
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	f := dtq.RedriveFilter{Queue: dtq.DefaultQueue}
	if b.Queue != nil {
		q, err := queueName(*b.Queue)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		f.Queue = q
	}
	if b.TaskType != nil {
		f.Type = *b.TaskType
	}
	if b.ErrorContains != nil {
		f.ErrorContains = *b.ErrorContains
	}
	if b.DeadAfter != nil {
		f.After = *b.DeadAfter
	}
	if b.DeadBefore != nil {
		f.Before = *b.DeadBefore
	}
	o := dtq.RedriveOpts{DryRun: b.DryRun, Limit: 1000, Rate: 100}
	if given(b.Limit) {
		n, err := intField("limit", b.Limit)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		if n < 1 || n > 10000 {
			s.writeErr(w, r, invalidField("limit", sprintf("must be 1-10000 over HTTP (got %d)", n)))
			return
		}
		o.Limit = n
	}
	if given(b.RatePerSecond) {
		d, err := secondsField("rate_per_second", b.RatePerSecond) // a number, read as such
		if err != nil {
			s.writeErr(w, r, invalidField("rate_per_second", sprintf("must be a number (got %s)", shorten(b.RatePerSecond))))
			return
		}
		o.Rate = d.Seconds()
	}
	if !o.DryRun && o.Rate > 0 && time.Duration(float64(o.Limit)/o.Rate*float64(time.Second)) > maxHTTPRedrive {
		s.writeErr(w, r, invalidField("limit", sprintf("at rate_per_second %v would take over %v: lower limit or raise the rate, and call again while more is true",
			o.Rate, maxHTTPRedrive)))
		return
	}
	if !s.existingQueue(w, r, f.Queue) {
		return
	}
	res, err := s.admin.Redrive(r.Context(), f, o)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, redriveOf(res))
}
