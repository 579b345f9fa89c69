package api

import (
	"errors"
	"net/http"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api/wire"
)

// nodeFrom turns b, at path, into an engine node (dtq.Node). The JSON is
// read here; the engine validates the workflow (its errors name the node's
// path).
func nodeFrom(b *wire.Node, path string) (dtq.Node, error) {
	var s dtq.Node
	if b.Task != nil {
		req, err := request(b.Task, "")
		if err != nil {
			var he *httpError
			if errors.As(err, &he) {
				return s, &httpError{he.status, he.code, path + ".task." + he.msg}
			}
			return s, err
		}
		s.Task = &dtq.NodeTask{Type: req.Type, Payload: req.Payload, Opts: req.Opts}
	}
	list := func(bs []wire.Node, name string) ([]dtq.Node, error) {
		if bs == nil {
			return nil, nil
		}
		out := make([]dtq.Node, len(bs))
		for i := range bs {
			st, err := nodeFrom(&bs[i], sprintf("%s.%s[%d]", path, name, i))
			if err != nil {
				return nil, err
			}
			out[i] = st
		}
		return out, nil
	}
	var err error
	if s.Chain, err = list(b.Chain, "chain"); err != nil {
		return s, err
	}
	if s.Parallel, err = list(b.Parallel, "parallel"); err != nil {
		return s, err
	}
	for _, cb := range []struct {
		body *wire.Node
		name string
		to   **dtq.Node
	}{{b.OnSuccess, "on_success", &s.OnSuccess}, {b.OnComplete, "on_complete", &s.OnComplete}} {
		if cb.body == nil {
			continue
		}
		st, err := nodeFrom(cb.body, path+"."+cb.name)
		if err != nil {
			return s, err
		}
		*cb.to = &st
	}
	return s, nil
}

// submitWorkflow: POST /api/v1/workflows {"queue", "root"} → 201 + the
// workflow; with Idempotency-Key, a replay → 200 + the first workflow as
// it is now (410 once it has expired), the key with another workflow →
// 422.
func (s *Server) submitWorkflow(w http.ResponseWriter, r *http.Request) {
	var b wire.WorkflowBody
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if b.Root == nil {
		s.writeErr(w, r, invalidField("root", "is required"))
		return
	}
	o := &dtq.WorkflowOpts{IdempotencyKey: r.Header.Get("Idempotency-Key")}
	if b.Queue != nil {
		q, err := queueName(*b.Queue)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		o.Queue = q
	}
	root, err := nodeFrom(b.Root, "root")
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	wf, err := s.c.EnqueueWorkflow(r.Context(), root, o)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	switch {
	case !wf.Duplicate:
		w.Header().Set("Location", "/api/v1/workflows/"+wf.ID)
		writeJSON(w, http.StatusCreated, workflowOf(wf))
	case wf.Status == "": // the first finished and expired; the key is still remembered
		writeJSON(w, http.StatusGone, wire.Error{Error: wire.ErrorDetail{Code: wire.CodeExpired,
			Message: "the workflow of this Idempotency-Key finished and has expired; the key is remembered until its window ends", TaskID: wf.ID}})
	default:
		writeJSON(w, http.StatusOK, workflowOf(wf))
	}
}

// getWorkflow: GET /api/v1/workflows/{id} → the workflow's graph and state.
func (s *Server) getWorkflow(w http.ResponseWriter, r *http.Request) {
	wf, err := s.c.GetWorkflow(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, workflowOf(wf))
}

// cancelWorkflow: POST /api/v1/workflows/{id}/cancel → the workflow.
func (s *Server) cancelWorkflow(w http.ResponseWriter, r *http.Request) {
	wf, err := s.c.CancelWorkflow(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, workflowOf(wf))
}
