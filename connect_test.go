package dtq_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/conn"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/queue"
	"github.com/redis/rueidis"
)

// Connect takes the binary's URLs: a real server's, and memory:// for an
// embedded one; a client from either runs tasks and queue messages.
func TestConnect(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	for _, url := range []string{"redis://" + srv.Addr, "memory://"} {
		t.Run(strings.TrimSuffix(url[:strings.Index(url, ":")], ":"), func(t *testing.T) {
			ctx := t.Context()
			rc, err := dtq.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			ns := redistest.Namespace(t)
			c, err := dtq.NewClient(rc, &dtq.Config{Namespace: ns})
			if err != nil {
				t.Fatal(err)
			}
			w, err := dtq.NewWorker(c, nil)
			if err != nil {
				t.Fatal(err)
			}
			w.Handle("echo", func(_ context.Context, task *dtq.Task) (any, error) { return task.Payload, nil })
			if err := w.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer w.Stop(context.Background())
			res, err := c.Enqueue(ctx, "echo", "hi", nil)
			if err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				task, err := c.Get(ctx, res.Task.ID)
				if err == nil && task.Status == dtq.StatusSucceeded {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("task %+v, %v", task, err)
				}
				time.Sleep(5 * time.Millisecond)
			}

			qc, err := queue.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer qc.Close()
			qq, err := queue.New(qc, "q", &queue.Config{Namespace: ns})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := qq.Put(ctx, "t", []byte("m"), nil); err != nil {
				t.Fatal(err)
			}
			if st, err := qq.Stats(ctx, "t", ""); err != nil || st.Queued != 1 {
				t.Fatalf("queue stats %+v, %v", st, err)
			}
		})
	}
}

// Closing a memory:// client stops its server; each has its own.
func TestConnectMemoryIsPrivate(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ac, err := dtq.Connect(ctx, "memory://")
	if err != nil {
		t.Fatal(err)
	}
	bc, err := dtq.Connect(ctx, "memory://")
	if err != nil {
		t.Fatal(err)
	}
	defer bc.Close()
	a, b := redisconn.Client(ac), redisconn.Client(bc)
	if err := a.Do(ctx, a.B().Set().Key("k").Value("a").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	if err := b.Do(ctx, b.B().Get().Key("k").Build()).Error(); !rueidis.IsRedisNil(err) {
		t.Fatalf("the second server sees the first's key: %v", err)
	}
	ac.Close()
	if err := a.Do(ctx, a.B().Ping().Build()).Error(); err == nil {
		t.Fatal("a closed memory:// client still answers")
	}
}

// A URL Connect cannot use is an error that says why and hides the
// password.
func TestConnectRefuses(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]string{
		"http://localhost:6379":             "scheme",
		"redis://u:secret@a:1,b:2":          "several hosts",
		"redis+sentinel://u:secret@a:26379": "master",
		"memory://x":                        "scheme",
	} {
		_, err := dtq.Connect(t.Context(), url)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("Connect(%q) = %v, want an error about %s without the password", url, err, want)
		}
	}
}

// closer is a value with Close that is no Redis connection.
type closer struct{}

func (closer) Close() {}

// NewClient takes a connection from Connect or a caller's rueidis client,
// and refuses anything else with ErrInvalid.
func TestNewClientTakesAConnectionOrARueidisClient(t *testing.T) {
	t.Parallel()
	b := redistest.Embedded(t)
	for name, r := range map[string]dtq.Redis{"rueidis client": b.Client, "conn.Redis": redisconn.Wrap(b.Client)} {
		c, err := dtq.NewClient(r, &dtq.Config{Namespace: redistest.Namespace(t)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := c.Enqueue(t.Context(), "echo", nil, nil); err != nil {
			t.Fatalf("%s: enqueue: %v", name, err)
		}
	}
	for name, r := range map[string]dtq.Redis{"nil": nil, "another Close": closer{}, "nil conn.Redis": (*conn.Redis)(nil)} {
		if _, err := dtq.NewClient(r, nil); !errors.Is(err, dtq.ErrInvalid) {
			t.Errorf("NewClient(%s) = %v, want ErrInvalid", name, err)
		}
	}
}
