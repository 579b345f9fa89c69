package faults

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// The HTTP submitter retries 503 and 429 with the same Idempotency-Key
// until a definite answer.
func TestHTTPSubmitterRetries(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		w.Header().Set("Content-Type", "application/json")
		switch calls.Add(1) {
		case 1:
			w.WriteHeader(503)
			fmt.Fprint(w, `{"error":{"code":"unavailable","message":"x"}}`)
		case 2:
			w.WriteHeader(429)
			fmt.Fprint(w, `{"error":{"code":"queue_full","message":"x"}}`)
		default:
			w.WriteHeader(201)
			fmt.Fprint(w, `{"id":"q-1","status":"QUEUED"}`)
		}
	}))
	defer srv.Close()
	s := &HTTPSubmitter{URL: srv.URL, Queue: "q"}
	sub := s.Submit(context.Background(), Payload{Key: "k1"}, 3)
	if sub.Answer != OK || sub.TaskID != "q-1" || sub.Attempts != 3 || sub.Ambiguous != 1 {
		t.Fatalf("submission %+v", sub)
	}
	for _, k := range keys {
		if k != "k1" {
			t.Fatalf("Idempotency-Keys sent: %v", keys)
		}
	}
}

func TestClassifyHTTP(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status int
		body   string
		want   attempt
	}{
		{201, `{"id":"q-1"}`, attempt{taskID: "q-1"}},
		{200, `{"id":"q-1"}`, attempt{taskID: "q-1", duplicate: true}},
		{409, `{"error":{"code":"in_progress","task_id":"q-1"}}`, attempt{taskID: "q-1", duplicate: true}},
		{429, `{"error":{"code":"queue_full"}}`, attempt{retry: true}},
		{503, `{"error":{"code":"unavailable"}}`, attempt{retry: true, ambiguous: true}},
		{422, `{"error":{"code":"idempotency_key_reused","task_id":"q-1"}}`, attempt{}},
		{400, `{"error":{"code":"invalid_field"}}`, attempt{}},
	}
	for _, c := range cases {
		got := classifyHTTP(c.status, []byte(c.body))
		got.err = ""
		if got != c.want {
			t.Errorf("%d %s: %+v, want %+v", c.status, c.body, got, c.want)
		}
	}
}

// A submission whose tries all fail ambiguously ends Unknown at its
// deadline; one refused after an ambiguous try is Unknown too; one refused
// at once is Failed.
func TestRetryAnswers(t *testing.T) {
	t.Parallel()
	r := Retry{Deadline: 100 * time.Millisecond}
	sub := r.submit(context.Background(), "k", func(context.Context) attempt {
		return attempt{retry: true, ambiguous: true, err: "timeout"}
	})
	if sub.Answer != Unknown || sub.Attempts < 2 {
		t.Fatalf("always ambiguous: %+v", sub)
	}
	n := 0
	sub = r.submit(context.Background(), "k", func(context.Context) attempt {
		n++
		if n == 1 {
			return attempt{retry: true, ambiguous: true}
		}
		return attempt{err: "OOM"}
	})
	if sub.Answer != Unknown {
		t.Fatalf("refused after an ambiguous try: %+v", sub)
	}
	sub = r.submit(context.Background(), "k", func(context.Context) attempt { return attempt{err: "OOM"} })
	if sub.Answer != Failed || sub.Attempts != 1 {
		t.Fatalf("refused at once: %+v", sub)
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err              error
		retry, ambiguous bool
	}{
		{&dtq.ValidationError{Field: "x"}, false, false},
		{&dtq.QueueFullError{}, true, false},
		{dtq.ErrNotReplicated, true, true},
		{context.DeadlineExceeded, true, true},
		{errors.New("connection reset"), true, true},
	}
	for _, c := range cases {
		retry, ambiguous := Classify(c.err)
		if retry != c.retry || ambiguous != c.ambiguous {
			t.Errorf("Classify(%v) = %v, %v; want %v, %v", c.err, retry, ambiguous, c.retry, c.ambiguous)
		}
	}
}
