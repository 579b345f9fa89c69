package dtq_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/redis/rueidis"
)

// The floor benchmarks run, with no engine, the least Redis work any design
// of a task queue on Redis Streams needs per task: one XADD carrying the
// task's fields to enqueue it, a batched XREADGROUP to claim it, and a
// batched XACK + XDEL to complete it — no task record, result, history,
// fence, counter, index or event. They use the same server, client,
// concurrency and payload as the engine's benchmarks above, so the two sets
// of numbers compare: what the engine adds over the floor is the price of
// its features, and a target below the floor cannot be met by any design
// on the machine that measured it.
//
// Run: go test -run '^$' -bench Floor -benchtime 100000x .

const (
	floorStream = "floor:{q}:band5"
	floorGroup  = "workers"
)

func floorClient(b *testing.B) rueidis.Client {
	return redistest.Client(b, redistest.Start(b, nil))
}

func floorXADD(rc rueidis.Client, i int64) rueidis.Completed {
	return rc.B().Xadd().Key(floorStream).Id("*").FieldValue().
		FieldValue("i", "floor-"+strconv.FormatInt(i, 10)).FieldValue("t", "noop").FieldValue("p", benchPayload).
		FieldValue("m", "3").FieldValue("o", "30000").FieldValue("c", strconv.FormatInt(time.Now().UnixMilli(), 10)).Build()
}

// floorEnqueue: n XADDs from goroutines calling one at a time (the client
// pipelines concurrent calls).
func floorEnqueue(b *testing.B, rc rueidis.Client, n, goroutines int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				if err := rc.Do(context.Background(), floorXADD(rc, i)).Error(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// floorEnqueueMany: n XADDs sent as pipelines of batch commands.
func floorEnqueueMany(b *testing.B, rc rueidis.Client, n, batch int) {
	cmds := make(rueidis.Commands, 0, batch)
	for done := 0; done < n; done += batch {
		cmds = cmds[:0]
		for i := range min(batch, n-done) {
			cmds = append(cmds, floorXADD(rc, int64(done+i)))
		}
		for _, r := range rc.DoMulti(context.Background(), cmds...) {
			if err := r.Error(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// floorDrain claims n entries in batches of up to credit and completes each
// batch with one XACK and one XDEL, sent while the next batch is read.
func floorDrain(b *testing.B, rc rueidis.Client, n, credit int) {
	ctx := context.Background()
	if err := rc.Do(ctx, rc.B().XgroupCreate().Key(floorStream).Group(floorGroup).Id("0").Mkstream().Build()).Error(); err != nil && !rueidis.IsRedisBusyGroup(err) {
		b.Fatal(err)
	}
	acks := make(chan []string, 4)
	var wg sync.WaitGroup
	wg.Go(func() {
		for ids := range acks {
			for _, r := range rc.DoMulti(ctx,
				rc.B().Xack().Key(floorStream).Group(floorGroup).Id(ids...).Build(),
				rc.B().Xdel().Key(floorStream).Id(ids...).Build()) {
				if err := r.Error(); err != nil {
					b.Error(err)
				}
			}
		}
	})
	for done := 0; done < n; {
		res, err := rc.Do(ctx, rc.B().Xreadgroup().Group(floorGroup, "c1").Count(int64(credit)).Block(1000).
			Streams().Key(floorStream).Id(">").Build()).AsXRead()
		if err != nil && !rueidis.IsRedisNil(err) {
			b.Fatal(err)
		}
		entries := res[floorStream]
		if len(entries) == 0 {
			continue
		}
		ids := make([]string, len(entries))
		for i, e := range entries {
			ids[i] = e.ID
		}
		acks <- ids
		done += len(entries)
	}
	close(acks)
	wg.Wait()
}

// floorDrainSlots is floorDrain for a worker of slots slots: at most that
// many entries are claimed and not yet acknowledged, so a claim waits for
// the acknowledgement of earlier ones (in the engine, a task holds its
// slot until its handler returns, and a claim asks for the free ones).
func floorDrainSlots(b *testing.B, rc rueidis.Client, n, slots int) {
	ctx := context.Background()
	if err := rc.Do(ctx, rc.B().XgroupCreate().Key(floorStream).Group(floorGroup).Id("0").Mkstream().Build()).Error(); err != nil && !rueidis.IsRedisBusyGroup(err) {
		b.Fatal(err)
	}
	free := make(chan struct{}, slots)
	for range slots {
		free <- struct{}{}
	}
	var wg sync.WaitGroup
	for done := 0; done < n; {
		<-free
		k := 1
		for more := true; more && k < slots; {
			select {
			case <-free:
				k++
			default:
				more = false
			}
		}
		res, err := rc.Do(ctx, rc.B().Xreadgroup().Group(floorGroup, "c1").Count(int64(k)).Block(1000).
			Streams().Key(floorStream).Id(">").Build()).AsXRead()
		if err != nil && !rueidis.IsRedisNil(err) {
			b.Fatal(err)
		}
		entries := res[floorStream]
		for range k - len(entries) {
			free <- struct{}{}
		}
		if len(entries) == 0 {
			continue
		}
		ids := make([]string, len(entries))
		for i, e := range entries {
			ids[i] = e.ID
		}
		done += len(entries)
		wg.Go(func() {
			for _, r := range rc.DoMulti(ctx,
				rc.B().Xack().Key(floorStream).Group(floorGroup).Id(ids...).Build(),
				rc.B().Xdel().Key(floorStream).Id(ids...).Build()) {
				if err := r.Error(); err != nil {
					b.Error(err)
				}
			}
			for range ids {
				free <- struct{}{}
			}
		})
	}
	wg.Wait()
}

// BenchmarkFloorDrain10: the floor of BenchmarkDrain10 and of peerbench's
// drain at c=10 — at most 10 entries claimed and not acknowledged.
func BenchmarkFloorDrain10(b *testing.B) {
	rc := floorClient(b)
	floorEnqueueMany(b, rc, b.N, 1000)
	measure(b, rc, func() { floorDrainSlots(b, rc, b.N, 10) })
}

// BenchmarkFloorEnqueue: the floor of BenchmarkEnqueue (50 goroutines).
func BenchmarkFloorEnqueue(b *testing.B) {
	rc := floorClient(b)
	measure(b, rc, func() { floorEnqueue(b, rc, b.N, 50) })
}

// BenchmarkFloorEnqueueMany: the floor of BenchmarkEnqueueMany (1000 per
// round trip).
func BenchmarkFloorEnqueueMany(b *testing.B) {
	rc := floorClient(b)
	measure(b, rc, func() { floorEnqueueMany(b, rc, b.N, 1000) })
}

// BenchmarkFloorDrain: the floor of BenchmarkDrain (50 in flight).
func BenchmarkFloorDrain(b *testing.B) {
	rc := floorClient(b)
	floorEnqueueMany(b, rc, b.N, 1000)
	measure(b, rc, func() { floorDrain(b, rc, b.N, 50) })
}

// BenchmarkFloorLifecycle: the floor of BenchmarkLifecycle.
func BenchmarkFloorLifecycle(b *testing.B) {
	rc := floorClient(b)
	measure(b, rc, func() {
		var wg sync.WaitGroup
		wg.Go(func() { floorEnqueue(b, rc, b.N, 50) })
		floorDrain(b, rc, b.N, 50)
		wg.Wait()
	})
}

// BenchmarkFloorLatency: the floor of BenchmarkLatency — one XADD at a time
// to a consumer blocked in XREADGROUP on its own connection, idle between
// tasks as BenchmarkLatency is (a 200 µs time.Sleep, which lasts longer on
// some machines); reports XADD call → XREADGROUP return.
func BenchmarkFloorLatency(b *testing.B) {
	rc := floorClient(b)
	ctx := context.Background()
	if err := rc.Do(ctx, rc.B().XgroupCreate().Key(floorStream).Group(floorGroup).Id("$").Mkstream().Build()).Error(); err != nil {
		b.Fatal(err)
	}
	got := make(chan time.Time, 1)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			res, err := rc.Do(ctx, rc.B().Xreadgroup().Group(floorGroup, "c1").Count(1).Block(100).
				Streams().Key(floorStream).Id(">").Build()).AsXRead()
			if err == nil && len(res[floorStream]) > 0 {
				got <- time.Now()
			}
		}
	}()
	defer close(stop)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N + 50 { // the first 50 warm up
		t0 := time.Now()
		if err := rc.Do(ctx, floorXADD(rc, int64(i))).Error(); err != nil {
			b.Fatal(err)
		}
		if d := (<-got).Sub(t0); i >= 50 {
			lat = append(lat, d)
		}
		time.Sleep(200 * time.Microsecond)
	}
	b.StopTimer()
	reportLatency(b, lat)
}
