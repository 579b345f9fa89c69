package queue_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/queue"
	"github.com/redis/rueidis"
)

// The benchmarks run against their own redis-server and report, besides
// time per message:
//
//	msgs/s          messages per second of wall time
//	redis-µs/msg    Redis CPU per message from INFO commandstats: the usec of
//	                the commands the client sends (scripts, XADD, XREADGROUP,
//	                XREAD, BLPOP). A script's usec includes the commands it
//	                ran, which commandstats also lists on their own; those are
//	                not added again. Single-topic subscriptions never run
//	                XREADGROUP inside a script, so all of its usec is client
//	                calls; XADD is counted only where the client sends it
//	                (keyless puts), not where put.lua runs it (keyed puts).
//	redis-proc-µs/msg  the redis-server process's user+sys CPU per message
//	                (INFO cpu), which adds networking and event-loop work
//
// Run: go test -run '^$' -bench . -benchtime 200000x ./queue

const benchPayload = `{"order_id":"123456","action":"charge","amount_cents":4200,"currency":"EUR","attempt":1}`

type redisCPU struct{ cmdUsec, procUsec float64 }

func readRedisCPU(b *testing.B, c rueidis.Client, clientXadd bool) redisCPU {
	b.Helper()
	info, err := redistest.Do(context.Background(), c, "INFO", "everything").ToString()
	if err != nil {
		b.Fatal(err)
	}
	var r redisCPU
	for _, line := range strings.Split(info, "\r\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch name {
		case "used_cpu_user", "used_cpu_sys":
			f, _ := strconv.ParseFloat(rest, 64)
			r.procUsec += f * 1e6
		case "cmdstat_xadd", "cmdstat_evalsha", "cmdstat_eval", "cmdstat_xreadgroup", "cmdstat_xread", "cmdstat_blpop":
			if name == "cmdstat_xadd" && !clientXadd {
				continue
			}
			_, u, _ := strings.Cut(rest, "usec=")
			f, _ := strconv.ParseFloat(u[:strings.IndexByte(u, ',')], 64)
			r.cmdUsec += f
		}
	}
	return r
}

func report(b *testing.B, c rueidis.Client, before redisCPU, start time.Time, n int, clientXadd bool) {
	after := readRedisCPU(b, c, clientXadd)
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "msgs/s")
	b.ReportMetric((after.cmdUsec-before.cmdUsec)/float64(n), "redis-µs/msg")
	b.ReportMetric((after.procUsec-before.procUsec)/float64(n), "redis-proc-µs/msg")
}

func benchQueue(b *testing.B) (*queue.Queue, rueidis.Client) {
	srv := redistest.Start(b, nil)
	c := redistest.Client(b, srv)
	q, err := queue.New(redisconn.Wrap(c), "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	return q, c
}

// publish puts n messages with the given number of concurrent publishers,
// with random keys (nil options) or, when keyed, a distinct key each.
func publish(b *testing.B, q *queue.Queue, n, publishers int, keyed bool) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				var opts *queue.PutOpts
				if keyed {
					opts = &queue.PutOpts{Key: "order:" + strconv.FormatInt(i, 10)}
				}
				if ok, err := q.Put(context.Background(), "work", []byte(benchPayload), opts); err != nil || !ok {
					b.Errorf("put: %v %v", ok, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// consume receives and acks n messages with one subscription and the given
// number of worker goroutines.
func consume(b *testing.B, q *queue.Queue, n, workers, inFlight int) {
	s, err := q.Subscribe(context.Background(), map[string]int{"work": 0}, &queue.SubscribeOpts{MaxInFlight: inFlight})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(context.Background())
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				m, err := s.Receive(context.Background())
				if err != nil {
					b.Error(err)
					return
				}
				if err := m.Ack(context.Background()); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkPublish: 50 concurrent publishers, random keys, ~90-byte messages.
func BenchmarkPublish(b *testing.B) {
	q, c := benchQueue(b)
	b.ResetTimer()
	before, start := readRedisCPU(b, c, true), time.Now()
	publish(b, q, b.N, 50, false)
	b.StopTimer()
	report(b, c, before, start, b.N, true)
}

// BenchmarkReceiveAck: a pre-filled topic drained by one subscription
// (MaxInFlight 256) with 32 workers receiving and acking.
func BenchmarkReceiveAck(b *testing.B) {
	q, c := benchQueue(b)
	publish(b, q, b.N, 50, false)
	b.ResetTimer()
	before, start := readRedisCPU(b, c, true), time.Now()
	consume(b, q, b.N, 32, 256)
	b.StopTimer()
	report(b, c, before, start, b.N, true)
}

// BenchmarkCycle: publishers and a consumer at once; Redis CPU covers the
// full put → receive → ack cycle.
func BenchmarkCycle(b *testing.B) {
	q, c := benchQueue(b)
	b.ResetTimer()
	before, start := readRedisCPU(b, c, true), time.Now()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); publish(b, q, b.N, 50, false) }()
	go func() { defer wg.Done(); consume(b, q, b.N, 32, 256) }()
	wg.Wait()
	b.StopTimer()
	report(b, c, before, start, b.N, true)
}

// BenchmarkCycleKeyed is BenchmarkCycle with a distinct key per message: each
// put runs put.lua (deduplication) and each ack forgets the key.
func BenchmarkCycleKeyed(b *testing.B) {
	q, c := benchQueue(b)
	b.ResetTimer()
	before, start := readRedisCPU(b, c, false), time.Now()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); publish(b, q, b.N, 50, true) }()
	go func() { defer wg.Done(); consume(b, q, b.N, 32, 256) }()
	wg.Wait()
	b.StopTimer()
	report(b, c, before, start, b.N, false)
}
