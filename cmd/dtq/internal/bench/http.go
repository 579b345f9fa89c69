package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// HTTPOpts configure the measures that drive a running server.
type HTTPOpts struct {
	URL         string        // the server, e.g. http://localhost:8000
	APIKey      string        // sent as X-API-Key when set
	Queue       string        // defaults to "default" (served by dtq serve's workers)
	TaskType    string        // defaults to "echo" (a handler of dtq serve)
	Connections int           // concurrent connections; defaults to 64
	Duration    time.Duration // how long to submit; defaults to 10s
	Batch       int           // tasks per request: 0 or 1 POST /api/v1/tasks, more the batch route
	N           int           // tasks, for HTTPDrain; defaults to 100,000
}

func (o *HTTPOpts) defaults() {
	o.URL = strings.TrimSuffix(o.URL, "/")
	if o.Queue == "" {
		o.Queue = "default"
	}
	if o.TaskType == "" {
		o.TaskType = "echo"
	}
	if o.Connections <= 0 {
		o.Connections = 64
	}
	if o.Duration <= 0 {
		o.Duration = 10 * time.Second
	}
	if o.N <= 0 {
		o.N = 100_000
	}
}

// client is an HTTP client keeping up to conns connections to one server.
func client(conns int) *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			MaxConnsPerHost:     conns,
			IdleConnTimeout:     time.Minute,
		},
	}
}

// body returns the request body of one submission of o.Batch tasks.
func (o *HTTPOpts) body() (path string, body []byte) {
	one := fmt.Sprintf(`{"task_type":%q,"queue":%q,"payload":%s}`, o.TaskType, o.Queue, Payload)
	if o.Batch <= 1 {
		return "/api/v1/tasks", []byte(one)
	}
	return "/api/v1/tasks/batch", []byte(`{"tasks":[` + strings.TrimSuffix(strings.Repeat(one+",", o.Batch), ",") + `]}`)
}

// post sends one request and returns its status (0 on a transport error).
func (o *HTTPOpts) post(ctx context.Context, c *http.Client, path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.URL+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if o.APIKey != "" {
		req.Header.Set("X-API-Key", o.APIKey)
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// HTTP submits for Duration over Connections connections, one task or a
// batch per request, and reports requests/s, tasks/s, statuses and request
// latency.
func HTTP(ctx context.Context, o HTTPOpts) (Result, error) {
	o.defaults()
	c := client(o.Connections)
	path, body := o.body()
	if code, b, err := o.post(ctx, c, path, body); err != nil {
		return nil, fmt.Errorf("POST %s%s: %w", o.URL, path, err)
	} else if code != 201 && code != 200 {
		return nil, fmt.Errorf("POST %s%s: %d %.200s", o.URL, path, code, b)
	}
	var mu sync.Mutex
	statuses := map[string]int{}
	var lat []time.Duration
	tasks := 0
	perTask := max(o.Batch, 1)
	start := time.Now()
	end := start.Add(o.Duration)
	var wg sync.WaitGroup
	for range o.Connections {
		wg.Go(func() {
			local := map[string]int{}
			var localLat []time.Duration
			n := 0
			// Requests in flight at the end complete and count: every
			// task the server accepted is reported.
			for time.Now().Before(end) && ctx.Err() == nil {
				t0 := time.Now()
				code, _, err := o.post(ctx, c, path, body)
				localLat = append(localLat, time.Since(t0))
				if err != nil {
					local["error"]++
					continue
				}
				local[strconv.Itoa(code)]++
				if code == 200 || code == 201 {
					n += perTask
				}
			}
			mu.Lock()
			for k, v := range local {
				statuses[k] += v
			}
			lat = append(lat, localLat...)
			tasks += n
			mu.Unlock()
		})
	}
	wg.Wait()
	d := time.Since(start)
	r := Result{"bench": "http", "connections": o.Connections, "batch": perTask, "seconds": round(d.Seconds(), 3),
		"requests": len(lat), "requests_per_sec": rate(len(lat), d), "tasks": tasks, "tasks_per_sec": rate(tasks, d),
		"statuses": statuses}
	percentiles(r, "request", lat)
	return r, nil
}

// HTTPDrain pauses the queue, submits N tasks through the batch route,
// resumes it and times how long the server's workers take to finish them
// (polling the queue's succeeded_total).
func HTTPDrain(ctx context.Context, o HTTPOpts) (Result, error) {
	o.defaults()
	c := client(8)
	before, err := succeededTotal(ctx, c, o)
	if errors.Is(err, errNoQueue) {
		// The queue cannot be paused before it exists: a first task,
		// run to its end, makes it.
		before, err = firstTask(ctx, c, o)
	}
	if err != nil {
		return nil, err
	}
	if err := setPaused(ctx, c, o, true); err != nil {
		return nil, err
	}
	defer func() { _ = setPaused(context.WithoutCancel(ctx), c, o, false) }() // best effort: the run's result stands
	o.Batch = max(o.Batch, 500)
	path, body := o.body()
	for sent := 0; sent < o.N; sent += o.Batch {
		b := body
		if left := o.N - sent; left < o.Batch {
			short := o
			short.Batch = left
			_, b = short.body()
		}
		if code, resp, err := o.post(ctx, c, path, b); err != nil || code != 200 {
			return nil, fmt.Errorf("POST %s: %d %v %.200s", path, code, err, resp)
		}
	}
	start := time.Now()
	if err := setPaused(ctx, c, o, false); err != nil {
		return nil, err
	}
	for {
		n, err := succeededTotal(ctx, c, o)
		if err != nil {
			return nil, err
		}
		if n-before >= int64(o.N) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
	d := time.Since(start)
	return Result{"bench": "drain", "via": "http", "tasks": o.N, "seconds": round(d.Seconds(), 3),
		"tasks_per_sec": rate(o.N, d)}, nil
}

// errNoQueue: the queue does not exist (404).
var errNoQueue = errors.New("no such queue")

// firstTask submits one task to the queue, which makes it, waits until it
// succeeded and returns the queue's succeeded_total then.
func firstTask(ctx context.Context, c *http.Client, o HTTPOpts) (int64, error) {
	one := o
	one.Batch = 1
	path, body := one.body()
	if code, resp, err := o.post(ctx, c, path, body); err != nil || code != http.StatusCreated {
		return 0, fmt.Errorf("POST %s: %d %v %.200s", path, code, err, resp)
	}
	for {
		n, err := succeededTotal(ctx, c, o)
		if err != nil || n > 0 {
			return n, err
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// succeededTotal reads the queue's succeeded_total; errNoQueue when the
// queue does not exist.
func succeededTotal(ctx context.Context, c *http.Client, o HTTPOpts) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.URL+"/api/v1/queues/"+o.Queue, nil)
	if err != nil {
		return 0, err
	}
	if o.APIKey != "" {
		req.Header.Set("X-API-Key", o.APIKey)
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	var st struct {
		Succeeded int64 `json:"succeeded_total"`
	}
	if res.StatusCode == http.StatusNotFound {
		return 0, fmt.Errorf("GET queue %s: %w", o.Queue, errNoQueue)
	}
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		return 0, fmt.Errorf("GET queue %s: %d %.200s", o.Queue, res.StatusCode, b)
	}
	err = json.NewDecoder(res.Body).Decode(&st)
	return st.Succeeded, err
}

// setPaused pauses or resumes the benchmark queue.
func setPaused(ctx context.Context, c *http.Client, o HTTPOpts, paused bool) error {
	action := "resume"
	if paused {
		action = "pause"
	}
	code, b, err := o.post(ctx, c, "/api/v1/queues/"+o.Queue+"/"+action, nil)
	if err == nil && code != 200 {
		err = fmt.Errorf("%s queue %s: %d %.200s", action, o.Queue, code, b)
	}
	return err
}
