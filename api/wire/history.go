package wire

// History is the answer of GET /api/v1/history: per bucket (a minute or an
// hour), what the processes of the namespace counted of a queue (every
// queue when left out) and task type (every type when left out).
type History struct {
	Queue   string          `json:"queue,omitempty"`
	Type    string          `json:"type,omitempty"`
	Step    string          `json:"step"`  // "minute" or "hour"
	Types   []string        `json:"types"` // the task types counted in the stretch
	Buckets []HistoryBucket `json:"buckets"`
}

// HistoryBucket is one bucket of a History, from its start at At: the
// submissions, the outcomes of the executions that ended in it (and of
// tasks that ended without one), and the percentiles of those executions'
// run time and of the pickup (ready to started) of those that started in
// it.
type HistoryBucket struct {
	At        Time        `json:"at"`
	Submitted int64       `json:"submitted"`
	Succeeded int64       `json:"succeeded"`
	Retried   int64       `json:"retried"`
	Dead      int64       `json:"dead"`
	Cancelled int64       `json:"cancelled"`
	Lost      int64       `json:"lost"`
	Suspended int64       `json:"suspended"`
	Run       Percentiles `json:"run"`
	Pickup    Percentiles `json:"pickup"`
}

// Percentiles summarise the durations a bucket counted, in milliseconds
// (zero when count is 0).
type Percentiles struct {
	Count int64   `json:"count"`
	P50Ms float64 `json:"p50_ms"`
	P95Ms float64 `json:"p95_ms"`
	P99Ms float64 `json:"p99_ms"`
}
