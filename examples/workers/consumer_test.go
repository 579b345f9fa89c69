package workers

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/proctest"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/queue"
)

// The example message consumer (python/consumer.py) against dtq serve on
// real Redis, in one consumer group with a Go subscription: 300 messages
// each acknowledged (redelivered after a nak where the handler failed),
// a poison message dead-lettered, and a consumer SIGKILLed holding a
// message that another then takes over.
func TestExampleConsumer(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, nil)
	serve := proctest.Start(t, binary, &proctest.StartOpts{DropDTQEnv: true}, "serve", "--redis", "redis://"+srv.Addr,
		"--addr", "127.0.0.1:0", "--queues", "default")
	q, err := queue.New(redisconn.Wrap(redistest.Client(t, srv)), "orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	spawned := 0
	consumers := map[string]*proc{}
	spawn := func() *proc {
		spawned++
		name := fmt.Sprintf("py-%d", spawned)
		p := startScript(t, nil, name, "python3", "python/consumer.py", "--url", serve.URL, "--worker", name, "--queue", "orders",
			"--topics", "new,slow", "--concurrency", "8", "--lease-seconds", leaseSeconds)
		consumers[name] = p
		return p
	}
	spawn()
	spawn()

	// A Go subscription of the same group takes its share.
	sub, err := q.Subscribe(ctx, map[string]int{"new": 0}, &queue.SubscribeOpts{VisibilityTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close(ctx)
	var mu sync.Mutex
	goAcked := map[string]int{}
	go func() {
		for {
			m, err := sub.Receive(ctx)
			if err != nil {
				return // closed
			}
			if string(m.Data) == "poison" || (len(m.Data) > 5 && string(m.Data[:5]) == "fail:" && m.Deliveries < 2) {
				m.Nak(ctx, 0) // left to the Python consumers, which dead-letter or fail it
				continue
			}
			if m.Ack(ctx) == nil {
				mu.Lock()
				goAcked[m.Key]++
				mu.Unlock()
			}
		}
	}()

	const n = 300
	for i := range n {
		data := fmt.Sprintf("ok %d", i)
		switch {
		case i == 7:
			data = "poison"
		case i%10 == 0:
			data = "fail:1"
		}
		if ok, err := q.Put(ctx, "new", []byte(data), &queue.PutOpts{Key: fmt.Sprintf("m-%d", i)}); !ok || err != nil {
			t.Fatalf("put %d: %v %v", i, ok, err)
		}
	}
	empty := func(topic string) bool {
		st, err := q.Stats(ctx, topic, "")
		return err == nil && st == queue.TopicStats{}
	}
	// Counted once the queue is empty and each settled message's ack is
	// reported: a consumer prints its "acked" line, and the Go
	// subscription counts its own, just after Redis has it.
	acked := map[string]int{}
	nacked := map[string]bool{}
	count := func() {
		clear(acked)
		for _, p := range consumers {
			for _, e := range p.events() {
				key, _ := e["key"].(string)
				switch e["event"] {
				case "acked":
					acked[key]++
				case "nacked":
					nacked[key] = true
				}
			}
		}
		mu.Lock()
		for k, c := range goAcked {
			acked[k] += c
		}
		mu.Unlock()
	}
	eventually(t, 60*time.Second, "every message settled and its ack reported", func() bool {
		if !empty("new") {
			return false
		}
		count()
		for i := range n {
			if i != 7 && acked[fmt.Sprintf("m-%d", i)] == 0 {
				return false
			}
		}
		return true
	})
	time.Sleep(200 * time.Millisecond) // a second ack of one message would be reported by now
	count()
	for i := range n {
		key := fmt.Sprintf("m-%d", i)
		switch {
		case i == 7:
			if acked[key] != 0 {
				t.Fatalf("the poison message was acknowledged")
			}
		case acked[key] != 1:
			t.Fatalf("%s acknowledged %d times, want once", key, acked[key])
		}
	}
	if len(nacked) == 0 {
		t.Fatal("no failing message was nacked by a Python consumer")
	}
	dead, err := q.DeadLetters(ctx, 10)
	if err != nil || len(dead) != 1 || dead[0].Key != "m-7" || dead[0].Reason != "poison message" {
		t.Fatalf("dead letters %+v (%v), want the poison message", dead, err)
	}

	// SIGKILL the consumer holding a slow message: another takes it over.
	if ok, err := q.Put(ctx, "slow", []byte("slow:1500"), &queue.PutOpts{Key: "slow-1"}); !ok || err != nil {
		t.Fatalf("put slow: %v %v", ok, err)
	}
	var victim *proc
	eventually(t, 10*time.Second, "a consumer leases the slow message", func() bool {
		for _, p := range consumers {
			for _, e := range p.events() {
				if e["event"] == "leased" && e["key"] == "slow-1" {
					victim = p
					return true
				}
			}
		}
		return false
	})
	victim.cmd.Process.Kill()
	victim.cmd.Wait()
	delete(consumers, victim.name)
	spawn()
	var taker *proc
	eventually(t, 30*time.Second, "another consumer acknowledges it", func() bool {
		for _, p := range consumers {
			for _, e := range p.events() {
				if e["event"] == "acked" && e["key"] == "slow-1" && e["deliveries"] == 2.0 {
					taker = p
					return true
				}
			}
		}
		return false
	})
	if taker == victim || !empty("slow") {
		t.Fatalf("after the kill: taken by %s, topic slow empty %v", taker.name, empty("slow"))
	}
	serve.CheckNoPanic()
}
