package api_test

import (
	"context"
	"time"

	"github.com/dtq-dev/dtq"
)

// The probes of the worker control routes: part of TestOpenAPIAnswers.

// workerControl provokes the answers of POST /api/v1/workers/{id}/quiet
// and …/stop: a Go worker of its own (stopped after), an unknown id, a bad
// id and a lease holder.
func (p *prober) workerControl(e *env) {
	w, err := dtq.NewWorker(e.c, &dtq.WorkerConfig{ID: "probed", Queues: []string{"probed"}})
	if err != nil {
		p.t.Fatal(err)
	}
	w.Handle("echo", func(context.Context, *dtq.Task) (any, error) { return nil, nil })
	if err := w.Start(context.Background()); err != nil {
		p.t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = w.Stop(ctx)
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if r := e.do("POST", "/api/v1/workers/probed/quiet", ""); r.status != 404 || time.Now().After(deadline) {
			p.answer(opQuiet, r.status, r.header, r.raw)
			break
		}
	}
	if r := p.do(e, 200, opStop, "/api/v1/workers/probed/stop", ""); r.str("requested") != "stop" {
		p.t.Errorf("stop: %s", r.raw)
	}
	if r := p.do(e, 200, opQuiet, "/api/v1/workers/probed/quiet", ""); r.str("requested") != "stop" || r.str("worker") != "probed" {
		p.t.Errorf("a quiet after the stop: %s", r.raw)
	}
	p.do(e, 404, opQuiet, "/api/v1/workers/nobody/quiet", "")
	p.do(e, 404, opStop, "/api/v1/workers/nobody/stop", "")
	p.do(e, 400, opQuiet, "/api/v1/workers/a%20b/quiet", "")
	p.do(e, 400, opStop, "/api/v1/workers/a%20b/stop", "")
	p.do(e, 200, opLease, "/api/v1/leases", `{"worker":"probe-holder","queues":["idle"]}`)
	p.do(e, 409, opQuiet, "/api/v1/workers/http:probe-holder/quiet", "")
	p.do(e, 409, opStop, "/api/v1/workers/http:probe-holder/stop", "")
}
