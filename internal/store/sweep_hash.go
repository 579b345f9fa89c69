package store

import (
	"context"
	"strconv"

	"github.com/dtq-dev/dtq/internal/script"
)

// sweepHash runs sweep over up to count fields of hash, scanning from
// cursor: KEYS the hash then the task hash of each field (the ULID ulidOf
// finds in its value), ARGV each field and its value. It returns the next
// cursor ("0": the scan is complete) and the script's count.
func (q *Queue) sweepHash(ctx context.Context, hash, cursor string, count int, sweep *script.Script,
	ulidOf func(value string) string) (string, int, error) {
	c := q.s.r
	e, err := c.Do(ctx, c.B().Hscan().Key(hash).Cursor(mustUint(cursor)).Count(int64(count)).Build()).AsScanEntry()
	if err != nil {
		return cursor, 0, err
	}
	if len(e.Elements) == 0 {
		return strconv.FormatUint(e.Cursor, 10), 0, nil
	}
	ks := []string{hash}
	var args []string
	for i := 0; i+1 < len(e.Elements); i += 2 {
		ks = append(ks, q.k.Task(ulidOf(e.Elements[i+1])))
		args = append(args, e.Elements[i], e.Elements[i+1])
	}
	n, err := sweep.Exec(ctx, c, ks, args).AsInt64()
	return strconv.FormatUint(e.Cursor, 10), int(n), err
}
