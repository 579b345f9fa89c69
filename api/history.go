package api

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api/wire"
)

// history serves GET /api/v1/history?queue=&type=&step=&since=&until=&last=:
// a stretch of the stored history (Admin.History).
func (s *Server) history(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	hq := dtq.HistoryQuery{Queue: q.Get("queue"), Type: q.Get("type")}
	switch st := q.Get("step"); st {
	case "":
	case "minute":
		hq.Step = time.Minute
	case "hour":
		hq.Step = time.Hour
	default:
		s.writeErr(w, r, invalidField("step", sprintf("must be minute or hour (got %q)", shorten(json.RawMessage(st)))))
		return
	}
	for name, to := range map[string]*time.Time{"since": &hq.Since, "until": &hq.Until} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				s.writeErr(w, r, invalidField(name, sprintf("must be an RFC 3339 time, e.g. 2026-12-01T08:00:00Z (got %q)", shorten(json.RawMessage(v)))))
				return
			}
			*to = t
		}
	}
	if v := q.Get("last"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || q.Get("since") != "" {
			s.writeErr(w, r, invalidField("last", sprintf("must be a positive duration such as 90m or 24h, without since (got %q)", shorten(json.RawMessage(v)))))
			return
		}
		until := hq.Until
		if until.IsZero() {
			until = time.Now()
		}
		hq.Since = until.Add(-d)
	}
	if hq.Queue != "" && !s.existingQueue(w, r, hq.Queue) {
		return
	}
	h, err := s.admin.History(r.Context(), hq)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	out := wire.History{Queue: h.Queue, Type: h.Type, Step: "minute", Types: h.Types, Buckets: make([]wire.HistoryBucket, len(h.Buckets))}
	if h.Step == time.Hour {
		out.Step = "hour"
	}
	for i, b := range h.Buckets {
		out.Buckets[i] = wire.HistoryBucket{At: wire.Time(b.At), Submitted: b.Submitted, Succeeded: b.Succeeded, Retried: b.Retried,
			Dead: b.Dead, Cancelled: b.Cancelled, Lost: b.Lost, Suspended: b.Suspended, Run: percentiles(b.Run), Pickup: percentiles(b.Pickup)}
	}
	writeJSON(w, http.StatusOK, out)
}

func percentiles(p dtq.Percentiles) wire.Percentiles {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return wire.Percentiles{Count: p.Count, P50Ms: ms(p.P50), P95Ms: ms(p.P95), P99Ms: ms(p.P99)}
}
