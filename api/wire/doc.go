// Package wire holds the JSON types of dtq's HTTP API (package api): the
// bodies clients send and the answers the server writes, one Go type per
// schema of api/openapi.json, named as the schema is. The server builds
// these types to answer and decodes requests into them; the dtq CLI, and
// any Go client, decodes answers into the same types and builds requests
// with them.
//
// A client decodes an answer with encoding/json:
//
//	var task wire.Task
//	if err := json.NewDecoder(res.Body).Decode(&task); err != nil { … }
//	fmt.Println(task.ID, task.Status, time.Time(task.CreatedAt))
//
// and an error answer (any status of 400 and above) into [Error]:
//
//	var e wire.Error
//	json.Unmarshal(body, &e) // e.Error.Code is one of the Code constants
//
// # Caveats
//
//   - The numbers of request bodies (priority, delay_seconds, max, …) are
//     [encoding/json.RawMessage]: the server reads them itself, so that
//     1.5 for an integer, or null for the default, is answered precisely.
//     A client writes them with json.Marshal of the number.
//   - Times are [Time]: RFC 3339 in UTC with exactly three fractional
//     digits when written; any RFC 3339 time when read.
//   - The fields of an answer come in the order the API writes them, which
//     is not always the order of their meaning (Task's times come last).
//   - The package holds types only: the conversions from the engine's
//     types (package dtq) are the server's.
package wire

import "github.com/dtq-dev/dtq/internal/wiretime"

// Time is a time of the API: its JSON is RFC 3339 in UTC with exactly
// three fractional digits ("2026-12-05T17:14:18.910Z", dtq.TimeFormat);
// it reads any RFC 3339 time. time.Time(t) is the time.
type Time = wiretime.Time
