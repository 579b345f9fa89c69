package api

import (
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api/wire"
	"github.com/dtq-dev/dtq/internal/wiretime"
)

// maxHTTPLeaseWait bounds a long poll over HTTP (under the server's 30 s
// write timeout, with the request's own time besides).
const maxHTTPLeaseWait = 20 * time.Second

// leaseWindow is what the max, wait_seconds and lease_seconds of a lease
// request (of tasks or of messages) say; zero for one left out.
type leaseWindow struct {
	max         int
	wait, lease time.Duration
}

// readLeaseWindow reads those fields: max an integer other than 0,
// wait_seconds from 0 to the HTTP bound, lease_seconds above 0. (The
// engine and package queue check the rest of their ranges.)
func readLeaseWindow(max, wait, lease json.RawMessage) (leaseWindow, error) {
	var lw leaseWindow
	var err error
	if given(max) {
		if lw.max, err = intField("max", max); err != nil {
			return lw, err
		}
		if lw.max == 0 {
			return lw, invalidField("max", "must not be 0 (leave it out for 1)")
		}
	}
	if given(wait) {
		if lw.wait, err = secondsField("wait_seconds", wait); err != nil {
			return lw, err
		}
		if lw.wait < 0 || lw.wait > maxHTTPLeaseWait {
			return lw, invalidField("wait_seconds", sprintf("must be 0 to %v over HTTP (got %s)", maxHTTPLeaseWait.Seconds(), shorten(wait)))
		}
	}
	if given(lease) {
		if lw.lease, err = secondsField("lease_seconds", lease); err != nil {
			return lw, err
		}
		if lw.lease <= 0 {
			return lw, invalidField("lease_seconds", sprintf("must be above 0 (leave it out for the default) (got %s)", shorten(lease)))
		}
	}
	return lw, nil
}

// lease: POST /api/v1/leases → 200 {"leases": […]} (none after the wait).
func (s *Server) lease(w http.ResponseWriter, r *http.Request) {
	var b wire.LeaseRequest
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if b.Worker == nil {
		s.writeErr(w, r, invalidField("worker", "is required: a name for the lease holder"))
		return
	}
	lw, err := readLeaseWindow(b.Max, b.WaitSeconds, b.LeaseSeconds)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	req := dtq.LeaseRequest{Worker: *b.Worker, Queues: b.Queues, Types: b.TaskTypes, Max: lw.max, Wait: lw.wait, Timeout: lw.lease,
		Library: b.Library, Host: clientHost(r)}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		to   *int
	}{{"concurrency", b.Concurrency, &req.Concurrency}, {"busy", b.Busy, &req.Busy}} {
		if given(f.raw) {
			n, err := intField(f.name, f.raw)
			if err != nil {
				s.writeErr(w, r, err)
				return
			}
			*f.to = n
		}
	}
	ls, err := s.leases.Lease(r.Context(), req)
	if err != nil && len(ls) == 0 {
		s.writeErr(w, r, err)
		return
	}
	out := wire.LeaseList{Leases: make([]*wire.Lease, len(ls))}
	for i, l := range ls {
		out.Leases[i] = leaseOf(l)
	}
	writeJSON(w, http.StatusOK, out)
}

// extendLease: POST /api/v1/leases/{lease}/extend → 200, or 409 once lost.
func (s *Server) extendLease(w http.ResponseWriter, r *http.Request) {
	token := r.PathValue("lease")
	deadline, cancel, err := s.leases.ExtendLease(r.Context(), token)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.LeaseExtended{Token: token, Deadline: wiretime.Time(deadline), CancelRequested: cancel})
}

// completeLease: POST /api/v1/leases/{lease}/complete {"result"} → 200 +
// the task, or 409 once lost.
func (s *Server) completeLease(w http.ResponseWriter, r *http.Request) {
	var b wire.LeaseCompletion
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	t, err := s.leases.CompleteLease(r.Context(), r.PathValue("lease"), b.Result)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, taskOf(t))
}

// failLease: POST /api/v1/leases/{lease}/fail {"error", "class",
// "retry_after_seconds"} → 200 + the task, or 409 once lost.
func (s *Server) failLease(w http.ResponseWriter, r *http.Request) {
	var b wire.LeaseFailure
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	f, err := leaseFailureOf(b)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	t, err := s.leases.FailLease(r.Context(), r.PathValue("lease"), f)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, taskOf(t))
}

// leaseFailureOf reads a failure's fields.
func leaseFailureOf(b wire.LeaseFailure) (dtq.LeaseFailure, error) {
	if b.Error == nil {
		return dtq.LeaseFailure{}, invalidField("error", "is required: what went wrong")
	}
	f := dtq.LeaseFailure{Error: *b.Error}
	if b.Class != nil {
		switch *b.Class {
		case "retryable":
		case "permanent":
			f.Permanent = true
		default:
			return dtq.LeaseFailure{}, invalidField("class", sprintf(`must be "retryable" or "permanent" (got %q)`, *b.Class))
		}
	}
	if given(b.RetryAfterSeconds) {
		d, err := secondsField("retry_after_seconds", b.RetryAfterSeconds)
		if err != nil {
			return dtq.LeaseFailure{}, err
		}
		f.RetryAfter = d
	}
	return f, nil
}

// endLeases: POST /api/v1/leases/outcomes {"outcomes": [...]} → 200 with
// each outcome's answer, in order (a lost lease or a malformed outcome is
// an answer, not a failure of the call).
func (s *Server) endLeases(w http.ResponseWriter, r *http.Request) {
	var b wire.LeaseOutcomes
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	switch {
	case b.Outcomes == nil:
		s.writeErr(w, r, invalidField("outcomes", "is required: a list of the leases' outcomes"))
		return
	case len(b.Outcomes) == 0 || len(b.Outcomes) > dtq.MaxLeaseOutcomes:
		s.writeErr(w, r, invalidField("outcomes", sprintf("must hold 1-%d outcomes (got %d)", dtq.MaxLeaseOutcomes, len(b.Outcomes))))
		return
	}
	out := wire.LeaseOutcomesRecorded{Outcomes: make([]wire.LeaseOutcomeRecorded, len(b.Outcomes))}
	outs := make([]dtq.LeaseOutcome, 0, len(b.Outcomes))
	var at []int // out's index of each of outs
	for i, o := range b.Outcomes {
		out.Outcomes[i].Lease = o.Lease
		lo := dtq.LeaseOutcome{Token: o.Lease, Result: o.Result}
		if o.Error != nil || o.Class != nil || given(o.RetryAfterSeconds) {
			if o.Result != nil {
				out.Outcomes[i].Error = errorDetail(invalidField("result", "must not be given with error: an outcome is a completion or a failure"))
				continue
			}
			f, err := leaseFailureOf(wire.LeaseFailure{Error: o.Error, Class: o.Class, RetryAfterSeconds: o.RetryAfterSeconds})
			if err != nil {
				out.Outcomes[i].Error = errorDetail(err)
				continue
			}
			lo.Failure = &f
		}
		outs = append(outs, lo)
		at = append(at, i)
	}
	ended, err := s.leases.EndLeases(r.Context(), outs)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	for k, e := range ended {
		if e.Err != nil {
			out.Outcomes[at[k]].Error = errorDetail(e.Err)
			continue
		}
		out.Outcomes[at[k]].Status = string(e.Status)
	}
	writeJSON(w, http.StatusOK, out)
}

// leaseProgress: POST /api/v1/leases/{lease}/progress {"fraction", "note"}
// → 204, or 409 once lost.
func (s *Server) leaseProgress(w http.ResponseWriter, r *http.Request) {
	var b wire.LeaseProgress
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if !given(b.Fraction) {
		s.writeErr(w, r, invalidField("fraction", "is required: a number from 0 to 1"))
		return
	}
	f, err := strconv.ParseFloat(string(b.Fraction), 64)
	if err != nil {
		s.writeErr(w, r, invalidField("fraction", sprintf("must be a number from 0 to 1 (got %s)", shorten(b.Fraction))))
		return
	}
	note := ""
	if b.Note != nil {
		note = *b.Note
	}
	if err := s.leases.LeaseProgress(r.Context(), r.PathValue("lease"), f, note); err != nil {
		s.writeErr(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// leaseSteps: GET /api/v1/leases/{lease}/steps → 200 {"steps": {name:
// result}}: the leased task's recorded durable steps.
func (s *Server) leaseSteps(w http.ResponseWriter, r *http.Request) {
	steps, err := s.leases.LeaseSteps(r.Context(), r.PathValue("lease"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.LeaseSteps{Steps: steps})
}

// recordLeaseStep: PUT /api/v1/leases/{lease}/steps/{name} {"result"} →
// 200 {"name", "result", "recorded"} (the result that stands), or 409
// once the lease is lost.
func (s *Server) recordLeaseStep(w http.ResponseWriter, r *http.Request) {
	var b wire.LeaseStep
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if b.Result == nil { // (null is a result)
		s.writeErr(w, r, invalidField("result", "is required: the step's result, any JSON value"))
		return
	}
	name := r.PathValue("name")
	stood, recorded, err := s.leases.RecordLeaseStep(r.Context(), r.PathValue("lease"), name, b.Result)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.LeaseStepRecorded{Name: name, Result: stood, Recorded: recorded})
}

// sleepLease: POST /api/v1/leases/{lease}/sleep {"step", "seconds"} →
// 200 {"over"} or {"over": false, "suspended"} (the lease ended); 409
// once the lease is lost.
func (s *Server) sleepLease(w http.ResponseWriter, r *http.Request) {
	var b wire.LeaseSleep
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if b.Seconds < 0 || b.Seconds > dtq.MaxSuspend.Seconds() {
		s.writeErr(w, r, invalidField("seconds", sprintf("must be 0-%v (got %v)", dtq.MaxSuspend.Seconds(), b.Seconds)))
		return
	}
	res, err := s.leases.SleepLease(r.Context(), r.PathValue("lease"), b.Step, time.Duration(b.Seconds*float64(time.Second)))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, leaseWaited(res))
}

// waitLease: POST /api/v1/leases/{lease}/wait {"signal", "timeout_seconds"}
// → 200 {"over", "payload" | "timed_out"} or {"over": false, "suspended"}
// (the lease ended); 409 once the lease is lost.
func (s *Server) waitLease(w http.ResponseWriter, r *http.Request) {
	var b wire.LeaseWaitFor
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if b.TimeoutSeconds < 0.001 || b.TimeoutSeconds > dtq.MaxSuspend.Seconds() {
		s.writeErr(w, r, invalidField("timeout_seconds", sprintf("must be 0.001-%v (got %v)", dtq.MaxSuspend.Seconds(), b.TimeoutSeconds)))
		return
	}
	res, err := s.leases.WaitLease(r.Context(), r.PathValue("lease"), b.Signal, time.Duration(b.TimeoutSeconds*float64(time.Second)))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, leaseWaited(res))
}

// childLease: POST /api/v1/leases/{lease}/child {"step", "task"} → 200
// {"over", "child"} once the child ended, or {"over": false,
// "suspended"} (the lease ended); 409 once the lease is lost.
func (s *Server) childLease(w http.ResponseWriter, r *http.Request) {
	var b wire.LeaseChild
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	req, err := request(&b.Task, "")
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	payload, _ := req.Payload.(json.RawMessage)
	res, err := s.leases.ChildLease(r.Context(), r.PathValue("lease"), b.Step, req.Type, payload, req.Opts)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, leaseWaited(res))
}

// leaseWaited is the answer of a lease's sleep, wait or child.
func leaseWaited(res dtq.LeaseWait) wire.LeaseWaited {
	out := wire.LeaseWaited{Over: res.Suspended == nil, Suspended: suspensionOf(res.Suspended), Payload: res.Payload, TimedOut: res.TimedOut}
	if c := res.Child; c != nil {
		out.Child = &wire.LeaseChildEnd{TaskID: c.ID, Status: string(c.Status), Result: c.Result, Error: c.Error}
	}
	return out
}

// clientHost is the address of the request's client, without its port.
func clientHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
