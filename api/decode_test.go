package api

import (
	"strings"
	"testing"
)

// submitBody is a typical submission: a small object payload and a few
// options.
const submitBody = `{"task_type":"email.send","payload":{"to":"ada@example.com","subject":"Welcome","lines":["a","b"],"n":42},"queue":"emails","priority":7,"max_attempts":5,"timeout_seconds":30}`

// BenchmarkDecode measures decodeJSON, the strict decoding of every request
// body, on a typical submission and on a batch of 100 of them.
func BenchmarkDecode(b *testing.B) {
	b.Run("submit", func(b *testing.B) {
		body := []byte(submitBody)
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var s submission
			if err := decodeJSON(body, &s); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("batch100", func(b *testing.B) {
		body := []byte(`{"tasks":[` + strings.TrimSuffix(strings.Repeat(submitBody+",", 100), ",") + `]}`)
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var s struct {
				Tasks []submission `json:"tasks"`
			}
			if err := decodeJSON(body, &s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
