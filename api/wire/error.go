package wire

// Error is the one error shape of the API, the body of every answer with
// a status of 400 and above: {"error":{"code":"…","message":"…"}}.
type Error struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what went wrong: a Code to act on and a Message for a
// person.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// TaskID names the task (or workflow) an answer of CodeInProgress,
	// CodeExpired or CodeIdempotency is about.
	TaskID string `json:"task_id,omitempty"`
}

// The codes of ErrorDetail (the ErrorCode schema of api/openapi.json).
const (
	CodeBadRequest      = "bad_request"
	CodeInvalid         = "invalid_field"
	CodeUnauthorized    = "unauthorized"
	CodeNotFound        = "not_found"
	CodeMethod          = "method_not_allowed"
	CodeConflict        = "conflict"
	CodeTooLarge        = "too_large"
	CodeUnsupported     = "unsupported_media_type"
	CodeIdempotency     = "idempotency_key_reused"
	CodeQueueFull       = "queue_full"
	CodeUnavailable     = "unavailable"
	CodeOutOfMemory     = "out_of_memory"
	CodeInProgress      = "in_progress"
	CodeExpired         = "expired"
	CodeNotCancellable  = "not_cancellable"
	CodeSignalDelivered = "signal_delivered"
	CodeTaskFinished    = "task_finished"
	CodeNotDead         = "not_dead"
	CodeNotEmpty        = "queue_not_empty"
	CodeLeaseLost       = "lease_lost"
	CodeTopicFull       = "topic_full"
	CodeInternal        = "internal"
	CodeForbiddenOrigin = "forbidden_origin"
	CodeForbidden       = "forbidden"
	CodeUpgradeRequired = "upgrade_required"
)

// Health is the answer of GET /health ({"status":"ok"}) and of GET /ready
// ({"status":"ready"}).
type Health struct {
	Status string `json:"status"`
}
