package wire

import "encoding/json"

// The bodies and answers of the reliable message queue (package queue)
// under /api/v1/mq/{queue}. A message body is text in Data when it is
// valid UTF-8, and always standard base64 in DataBase64.

// MQPut is the body of POST /api/v1/mq/{queue}/topics/{topic}/messages:
// the body in Data or in DataBase64 (exactly one).
type MQPut struct {
	Data       *string `json:"data,omitempty"`
	DataBase64 *string `json:"data_base64,omitempty"`
	Key        *string `json:"key,omitempty"`
	// DelaySeconds is a number, MaxSize an integer.
	DelaySeconds json.RawMessage `json:"delay_seconds,omitempty"`
	MaxSize      json.RawMessage `json:"max_size,omitempty"`
}

// MQPutAnswer is the answer of a put: Published false when the key is
// live (or tombstoned) in the queue.
type MQPutAnswer struct {
	Published bool   `json:"published"`
	Key       string `json:"key,omitempty"`
}

// MQLeaseRequest is the body of POST /api/v1/mq/{queue}/leases.
type MQLeaseRequest struct {
	Worker *string  `json:"worker"`
	Topics []string `json:"topics"` // highest priority first
	Group  *string  `json:"group,omitempty"`
	// Max is an integer; WaitSeconds and LeaseSeconds are numbers.
	Max          json.RawMessage `json:"max,omitempty"`
	WaitSeconds  json.RawMessage `json:"wait_seconds,omitempty"`
	LeaseSeconds json.RawMessage `json:"lease_seconds,omitempty"`
}

// MQLeaseList is the answer of POST /api/v1/mq/{queue}/leases.
type MQLeaseList struct {
	Leases []MQLease `json:"leases"`
}

// MQLease is one leased message.
type MQLease struct {
	Token      string  `json:"lease"`
	Deadline   Time    `json:"deadline"`
	Topic      string  `json:"topic"`
	ID         string  `json:"id"`
	Key        string  `json:"key"`
	Deliveries int     `json:"deliveries"`
	Data       *string `json:"data,omitempty"`
	DataBase64 string  `json:"data_base64"`
}

// MQSettled is the answer of a settlement.
type MQSettled struct {
	Token   string `json:"lease"`
	Settled string `json:"settled"` // ack, release, nak or term
}

// MQExtended is the answer of …/leases/{lease}/extend.
type MQExtended struct {
	Token    string `json:"lease"`
	Deadline Time   `json:"deadline"`
}

// MQRelease is the body of …/leases/{lease}/release.
type MQRelease struct {
	Topic   *string         `json:"topic"`
	MaxSize json.RawMessage `json:"max_size,omitempty"` // an integer
}

// MQNak is the optional body of …/leases/{lease}/nak.
type MQNak struct {
	DelaySeconds json.RawMessage `json:"delay_seconds,omitempty"` // a number
}

// MQTerm is the optional body of …/leases/{lease}/term.
type MQTerm struct {
	Reason *string `json:"reason,omitempty"`
}

// MQTopic is the answer of GET /api/v1/mq/{queue}/topics/{topic}: its
// counts for a consumer group.
type MQTopic struct {
	Topic    string `json:"topic"`
	Group    string `json:"group"`
	Queued   int64  `json:"queued"`
	InFlight int64  `json:"in_flight"`
	Delayed  int64  `json:"delayed"`
}

// MQDeadList is the answer of GET /api/v1/mq/{queue}/dead.
type MQDeadList struct {
	Dead []MQDead `json:"dead"`
}

// MQDead is one dead letter of the message queue.
type MQDead struct {
	ID         string  `json:"id"`
	Topic      string  `json:"topic"`
	MessageID  string  `json:"message_id"`
	Key        string  `json:"key"`
	Deliveries int     `json:"deliveries"`
	Reason     string  `json:"reason"`
	Data       *string `json:"data,omitempty"`
	DataBase64 string  `json:"data_base64"`
}

// MQQueueList is the answer of GET /api/v1/mq: the names of the message
// queues a message was put to, sorted.
type MQQueueList struct {
	Queues []string `json:"queues"`
}

// MQTopicList is the answer of GET /api/v1/mq/{queue}/topics: the queue's
// topics, sorted, with their counts for a consumer group.
type MQTopicList struct {
	Topics []MQTopic `json:"topics"`
}
