package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/dtq-dev/dtq"
)

// HTTPSubmitter submits through a `dtq api` process: POST /api/v1/tasks
// with the submission's key as Idempotency-Key.
type HTTPSubmitter struct {
	// URL is the API's base URL, "http://host:port".
	URL   string
	Queue string
	Retry Retry
	// Client sends the requests. Defaults to a client of its own.
	Client *http.Client
}

// Submit submits p (its Key is the Idempotency-Key) with priority prio.
// Answers: 201 (created) and 200 (replay of a finished task) carry the
// task; 409 in_progress and 410 expired name it: all are OK. 429 is retried
// (nothing written); 503 and a failed request are retried with their
// outcome unknown (the API answers 503 for a Redis timeout, a dropped
// connection, a refused write and ErrNotReplicated alike); any other 4xx is
// a definite refusal.
func (s *HTTPSubmitter) Submit(ctx context.Context, p Payload, prio int) Submit {
	hc := s.Client
	if hc == nil {
		hc = defaultHTTP
	}
	body, err := json.Marshal(map[string]any{
		"task_type": TaskType, "queue": s.Queue, "payload": p, "priority": prio, "max_attempts": dtq.MaxMaxAttempts,
	})
	if err != nil {
		panic(err) // a Payload always marshals
	}
	return s.Retry.submit(ctx, p.Key, func(ctx context.Context) attempt {
		req, err := http.NewRequestWithContext(ctx, "POST", s.URL+"/api/v1/tasks", bytes.NewReader(body))
		if err != nil {
			return attempt{err: err.Error()}
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", p.Key)
		res, err := hc.Do(req)
		if err != nil {
			return attempt{retry: true, ambiguous: true, err: err.Error()}
		}
		raw, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return attempt{retry: true, ambiguous: true, err: err.Error()}
		}
		return classifyHTTP(res.StatusCode, raw)
	})
}

var defaultHTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// classifyHTTP turns an answer of POST /api/v1/tasks into an attempt.
func classifyHTTP(status int, raw []byte) attempt {
	var body struct {
		ID    string `json:"id"`
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			TaskID  string `json:"task_id"`
		} `json:"error"`
	}
	json.Unmarshal(raw, &body)
	desc := fmt.Sprintf("HTTP %d %s: %s", status, body.Error.Code, strings.TrimSpace(body.Error.Message))
	switch {
	case status == http.StatusCreated && body.ID != "":
		return attempt{taskID: body.ID}
	case status == http.StatusOK && body.ID != "":
		return attempt{taskID: body.ID, duplicate: true}
	case (status == http.StatusConflict || status == http.StatusGone) && body.Error.TaskID != "":
		return attempt{taskID: body.Error.TaskID, duplicate: true}
	case status == http.StatusTooManyRequests:
		return attempt{retry: true, err: desc}
	case status >= 500:
		return attempt{retry: true, ambiguous: true, err: desc}
	}
	return attempt{err: desc}
}
