package proctest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"
)

// waitTimeout bounds WaitTask and WaitStatus.
const waitTimeout = 30 * time.Second

// Response is an HTTP answer of the process, read in full.
type Response struct {
	Status int
	Header http.Header
	Raw    []byte         // the body as sent
	Body   map[string]any // the body decoded, when it is JSON; nil otherwise
}

// Str returns the string field of the JSON body, "" when there is none.
func (r *Response) Str(field string) string {
	s, _ := r.Body[field].(string)
	return s
}

// ErrCode returns the error.code of a JSON error answer, "" when there is
// none.
func (r *Response) ErrCode() string {
	e, _ := r.Body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// Do sends a request to the process: a JSON body (with Content-Type
// application/json) when body is not empty, and the extra headers given as
// name, value pairs (they replace the Content-Type too). It fails the test
// when the request cannot be sent.
func (p *Proc) Do(method, path, body string, headers ...string) *Response {
	p.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, p.URL+path, rd)
	if err != nil {
		p.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return p.Send(req)
}

// Send sends req with http.DefaultClient and reads the answer. It fails the
// test when the request cannot be sent or when an answer of type
// application/json does not parse.
func (p *Proc) Send(req *http.Request) *Response {
	p.t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := &Response{Status: res.StatusCode, Header: res.Header, Raw: raw}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &r.Body); err != nil {
			p.t.Fatalf("%s %s: JSON answer does not parse: %v\n%s", req.Method, req.URL.Path, err, raw)
		}
	}
	return r
}

// Must is Do that fails the test unless the status is want.
func (p *Proc) Must(want int, method, path, body string, headers ...string) *Response {
	p.t.Helper()
	r := p.Do(method, path, body, headers...)
	if r.Status != want {
		p.t.Fatalf("%s %s %.200s: status %d, want %d: %s", method, path, body, r.Status, want, r.Raw)
	}
	return r
}

// Submit submits a task (POST /api/v1/tasks, which must answer 201) and
// returns its id.
func (p *Proc) Submit(body string, headers ...string) string {
	p.t.Helper()
	return p.Must(http.StatusCreated, "POST", "/api/v1/tasks", body, headers...).Str("id")
}

// Task returns a task's current state (GET /api/v1/tasks/{id}, which must
// answer 200).
func (p *Proc) Task(id string) *Response {
	p.t.Helper()
	return p.Must(http.StatusOK, "GET", "/api/v1/tasks/"+id, "")
}

// WaitTask polls a task until ok holds for its decoded state and returns
// that answer; after 30 s it fails the test, naming what was awaited.
func (p *Proc) WaitTask(id, what string, ok func(task map[string]any) bool) *Response {
	p.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		r := p.Task(id)
		if ok(r.Body) {
			return r
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("task %s: not %s within %v: %s", id, what, waitTimeout, r.Raw)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WaitStatus polls a task until its status is want and returns that
// answer; after 30 s it fails the test.
func (p *Proc) WaitStatus(id, want string) *Response {
	p.t.Helper()
	return p.WaitTask(id, want, func(task map[string]any) bool { return task["status"] == want })
}
