package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// runUntilHealthy runs `dtq args...` until /health answers, then cancels
// it and returns its error and log.
func runUntilHealthy(t *testing.T, addr string, args ...string) (string, error) {
	t.Helper()
	return runWhile(t, addr, nil, args...)
}

// runWhile runs `dtq args...` until /health answers, then runs during (if
// any), then cancels the process and returns its error and log.
func runWhile(t *testing.T, addr string, during func(), args ...string) (string, error) {
	t.Helper()
	_, log, err := runWhileOut(t, addr, during, args...)
	return log, err
}

// runWhileOut is runWhile, also returning what the process wrote to its
// standard output.
func runWhileOut(t *testing.T, addr string, during func(), args ...string) (stdout, log string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCmd(&out, &errOut)
	root.SetArgs(args)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	deadline := time.Now().Add(runTimeout)
	for {
		select {
		case err := <-done:
			return out.String(), errOut.String(), err
		default:
		}
		if res, err := http.Get("http://" + addr + "/health"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("dtq %v: no /health within %v", args, runTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if during != nil {
		during()
	}
	cancel()
	err = <-done
	return out.String(), errOut.String(), err
}

func TestServeEmbeddedStartsAndStops(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	log, err := runUntilHealthy(t, addr, "serve", "--addr", addr)
	if err != nil {
		t.Fatalf("dtq serve: %v\n%s", err, log)
	}
	first, _, _ := strings.Cut(log, "\n")
	if !strings.Contains(first, `"backend":"embedded"`) {
		t.Errorf("first log line %q does not name the embedded backend", first)
	}
	for _, want := range []string{`"msg":"dtq is ready"`, `"msg":"stopped"`} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %s:\n%s", want, log)
		}
	}
}

// Environment variables set flags the command line leaves alone; a bad
// value names its variable. Not parallel: it sets the environment.
func TestEnvironmentSetsFlags(t *testing.T) {
	t.Setenv("DTQ_CONCURRENCY", "lots")
	_, _, err := execute(t, "serve", "--addr", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), "DTQ_CONCURRENCY") {
		t.Fatalf("bad DTQ_CONCURRENCY: %v", err)
	}
	t.Setenv("DTQ_CONCURRENCY", "3")
	t.Setenv("DTQ_LOG_LEVEL", "shout")
	_, _, err = execute(t, "serve", "--log-level", "debug", "--addr", "256.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), "listen") {
		t.Fatalf("flag over environment: %v, want the listen error (the flag's log level wins over DTQ_LOG_LEVEL)", err)
	}
	_, _, err = execute(t, "serve", "--addr", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), "--log-level") {
		t.Fatalf("DTQ_LOG_LEVEL=shout: %v", err)
	}
}

func TestAPIAndWorkerNeedRedis(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"api", "worker"} {
		for _, extra := range [][]string{nil, {"--redis", "memory://"}} {
			_, _, err := execute(t, append([]string{cmd, "--addr", "127.0.0.1:0"}, extra...)...)
			if err == nil || !strings.Contains(err.Error(), "needs --redis") {
				t.Errorf("dtq %s %v: %v, want it refused (an embedded backend of its own shares no work)", cmd, extra, err)
			}
		}
	}
}

func TestProcessHelpNamesEnvironment(t *testing.T) {
	t.Parallel()
	out, _, err := execute(t, "serve", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range envFlags(newServeCmd(nil, nil)) {
		name, _, _ := strings.Cut(env, " ")
		if !strings.Contains(out, "["+name+"]") {
			t.Errorf("dtq serve --help does not name %s", name)
		}
	}
}

// --mq-ack-tombstone-ttl reaches the message queues served over HTTP: a
// key put again after its message was acked is a duplicate within the
// tombstone time, and free at once without the flag.
func TestServeMQAckTombstoneTTL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args      []string
		republish bool
	}{
		{[]string{"--mq-ack-tombstone-ttl", "1h"}, false},
		{nil, true},
	} {
		addr := freeAddr(t)
		base := "http://" + addr + "/api/v1/mq/orders"
		log, err := runWhile(t, addr, func() {
			if code, _ := postJSON(t, base+"/topics/new/messages", `{"data":"x","key":"o-1"}`); code != http.StatusCreated {
				t.Fatalf("put: %d, want 201", code)
			}
			code, body := postJSON(t, base+"/leases", `{"worker":"t","topics":["new"],"wait_seconds":5}`)
			var leases struct {
				Leases []struct{ Lease string } `json:"leases"`
			}
			if err := json.Unmarshal(body, &leases); code != http.StatusOK || err != nil || len(leases.Leases) != 1 {
				t.Fatalf("lease: %d %s (%v), want one lease", code, body, err)
			}
			if code, body := postJSON(t, base+"/leases/"+leases.Leases[0].Lease+"/ack", ""); code != http.StatusOK {
				t.Fatalf("ack: %d %s", code, body)
			}
			code, body = postJSON(t, base+"/topics/new/messages", `{"data":"y","key":"o-1"}`)
			var put struct{ Published bool }
			if err := json.Unmarshal(body, &put); err != nil || put.Published != c.republish {
				t.Errorf("dtq serve %v: put of the acked key: %d %s, want published %v", c.args, code, body, c.republish)
			}
		}, append([]string{"serve", "--addr", addr}, c.args...)...)
		if err != nil {
			t.Fatalf("dtq serve %v: %v\n%s", c.args, err, log)
		}
	}
	for _, bad := range []string{"-1s", "1us"} {
		if _, _, err := execute(t, "serve", "--addr", "127.0.0.1:0", "--mq-ack-tombstone-ttl", bad); err == nil || !strings.Contains(err.Error(), "--mq-ack-tombstone-ttl") {
			t.Errorf("--mq-ack-tombstone-ttl %s: %v, want an error naming the flag", bad, err)
		}
	}
}

// postJSON posts body (JSON, or nothing) to url and returns the status
// code and the answer's body.
func postJSON(t *testing.T, url, body string) (int, []byte) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}
