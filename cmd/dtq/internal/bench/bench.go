// Package bench is dtq's load generator: the measures behind `dtq bench`.
// Each measure drives the task engine directly (a Client on Redis) or a
// running server over HTTP, and returns one Result, printed as one JSON
// line.
package bench

import (
	"encoding/json"
	"math"
	"slices"
	"time"
)

// Payload is the body of every benchmark task: a small, realistic JSON
// object.
const Payload = `{"order_id":"123456","action":"charge","amount_cents":4200,"currency":"EUR"}`

// TaskType is the type of benchmark tasks run by an in-process worker.
const TaskType = "bench.noop"

// Result is one measure: its name, settings and numbers.
type Result map[string]any

// JSON returns r as one line of JSON.
func (r Result) JSON() string {
	b, _ := json.Marshal(map[string]any(r))
	return string(b)
}

// rate is n per second over d.
func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return round(float64(n)/d.Seconds(), 1)
}

func round(f float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(f*p) / p
}

// percentiles adds p50, p95, p99 and max of samples (in ms) to r under
// prefix.
func percentiles(r Result, prefix string, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	at := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(s)))) - 1
		i = max(0, min(i, len(s)-1))
		return round(float64(s[i])/float64(time.Millisecond), 3)
	}
	r[prefix+"_p50_ms"] = at(0.50)
	r[prefix+"_p95_ms"] = at(0.95)
	r[prefix+"_p99_ms"] = at(0.99)
	r[prefix+"_max_ms"] = at(1)
}
