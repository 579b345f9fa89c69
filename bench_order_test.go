package dtq_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/redis/rueidis"
)

// BenchmarkDrainOrderedRatio: issue 34's ratio — the drain of 20,000 tasks
// of 1,000 order keys (20 in each key's line) against the drain of 20,000
// plain tasks, at concurrency 50, in one process against one redis-server,
// alternating every round (the enqueues between them not measured). A VM's
// speed drifts by tens of percent within minutes; alternating drains of
// ~1 s each compares them under the same drift, which separate benchmark
// runs do not. Two ways: with the default retention of finished tasks
// (their records pile up over the rounds, as in BenchmarkDrainOrdered's
// server) and with 1 ms (peerbench's tuned profile: records go as they
// are written, the server's data stays the same from round to round).
// b.N is the number of rounds. It reports each kind's rate
// over all rounds, their ratio, and the median and range of the rounds'
// ratios. Run: go test -run '^$' -bench DrainOrderedRatio -benchtime 10x .
func BenchmarkDrainOrderedRatio(b *testing.B) {
	b.Run("retention=default", func(b *testing.B) {
		c, rc := benchClient(b)
		drainOrderedRatio(b, c, rc)
	})
	b.Run("retention=1ms", func(b *testing.B) {
		c, rc := benchClientRetention(b, time.Millisecond)
		drainOrderedRatio(b, c, rc)
	})
}

func drainOrderedRatio(b *testing.B, c *dtq.Client, rc rueidis.Client) {
	const perRound, keys = 20000, 1000
	var plainTime, orderedTime time.Duration
	var redisUs, goUs [2]float64 // CPU of each kind's drains, µs
	var ratios []float64
	b.ResetTimer()
	for round := range b.N {
		b.StopTimer()
		for _, q := range []string{"plain", "ordered"} {
			enqueueWith(b, c, perRound, func(i int) *dtq.EnqueueOpts {
				o := &dtq.EnqueueOpts{Queue: q}
				if q == "ordered" {
					o.OrderKey = fmt.Sprintf("k%d", i%keys)
				}
				return o
			})
		}
		b.StartTimer()
		// plain first in even rounds, ordered first in odd ones
		var d [2]time.Duration
		for j := range 2 {
			k := (j + round) % 2
			before := redisCPU(b, rc)
			d[k] = drainQueue(b, c, []string{"plain", "ordered"}[k], perRound, 50)
			after := redisCPU(b, rc)
			redisUs[k] += after.proc - before.proc
			goUs[k] += after.self - before.self
		}
		plainTime, orderedTime = plainTime+d[0], orderedTime+d[1]
		ratios = append(ratios, d[0].Seconds()/d[1].Seconds())
	}
	b.StopTimer()
	n := float64(perRound * b.N)
	plain, ordered := n/plainTime.Seconds(), n/orderedTime.Seconds()
	slices.Sort(ratios)
	b.ReportMetric(plain, "plain-tasks/s")
	b.ReportMetric(ordered, "ordered-tasks/s")
	b.ReportMetric(ordered/plain, "ratio")
	b.ReportMetric(ratios[len(ratios)/2], "median-round-ratio")
	b.ReportMetric(ratios[0], "min-round-ratio")
	b.ReportMetric(ratios[len(ratios)-1], "max-round-ratio")
	b.ReportMetric(redisUs[0]/n, "plain-redis-µs/task")
	b.ReportMetric(redisUs[1]/n, "ordered-redis-µs/task")
	b.ReportMetric(goUs[0]/n, "plain-go-µs/task")
	b.ReportMetric(goUs[1]/n, "ordered-go-µs/task")
}

// drainQueue runs a worker of concurrency on queue until its n queued
// tasks have succeeded; it returns how long that took (the worker's start
// included, its stop not).
func drainQueue(b *testing.B, c *dtq.Client, queue string, n, concurrency int) time.Duration {
	var done atomic.Int64
	finished := make(chan struct{})
	w, err := dtq.NewWorker(c, &dtq.WorkerConfig{Concurrency: concurrency, Queues: []string{queue}})
	if err != nil {
		b.Fatal(err)
	}
	w.Handle("noop", func(context.Context, *dtq.Task) (any, error) {
		if done.Add(1) == int64(n) {
			close(finished)
		}
		return nil, nil
	})
	a := dtq.NewAdmin(c)
	before, err := a.Stats(context.Background(), queue)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	w.Start(context.Background())
	<-finished
	for { // until the last outcomes are recorded
		st, err := a.Stats(context.Background(), queue)
		if err == nil && st.Succeeded >= before.Succeeded+int64(n) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	took := time.Since(start)
	w.Stop(context.Background())
	return took
}
