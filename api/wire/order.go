package wire

// OrderKey is an order key of a queue with a task in flight, in
// OrderKeyList.
type OrderKey struct {
	Key      string `json:"key"`
	InFlight string `json:"in_flight"` // the id of its task in flight
	Waiting  int64  `json:"waiting"`   // its tasks waiting for it
}

// OrderKeyList is the answer of GET /api/v1/queues/{name}/order-keys: the
// keys with a task in flight of one page, and the cursor of the next page
// ("" after the last).
type OrderKeyList struct {
	Keys       []OrderKey `json:"keys"`
	NextCursor string     `json:"next_cursor"`
}

// OrderKeyLine is the answer of GET /api/v1/queues/{name}/order-keys/{key}:
// the key's task in flight (left out when it has none), how many wait and
// the ids of the first 100 of them, in the order they will start.
type OrderKeyLine struct {
	Queue    string   `json:"queue"`
	Key      string   `json:"key"`
	InFlight string   `json:"in_flight,omitempty"`
	Waiting  int64    `json:"waiting"`
	Next     []string `json:"next"`
}
