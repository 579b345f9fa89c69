package store

import (
	"context"
	_ "embed"
	"strconv"
	"strings"

	"github.com/dtq-dev/dtq/internal/script"
	"github.com/redis/rueidis"
)

var (
	//go:embed progress.lua
	progressSource string

	progressScript = script.New("progress", libFor(progressSource), progressSource)
)

// Progress is what a running execution reported of its progress.
type Progress struct {
	Run      int
	At       int64   // Unix ms (Redis clock)
	Fraction float64 // 0-1
	Note     string
}

// Fence names a running execution for the scripts that fence it: its
// run, and, for an implicit first run (StartImplicit), the entry it runs
// from, its worker and its start.
type Fence struct {
	Run     int
	Band    int
	EntryID string
	Worker  string
	Started string // Unix ms
}

// SetProgress runs progress.lua: it records the progress of task ulid's
// execution f. False when f is not the task's running one.
func (q *Queue) SetProgress(ctx context.Context, ulid string, f Fence, fraction float64, note string) (bool, error) {
	v := strconv.FormatFloat(fraction, 'f', -1, 64) + "|" + note
	ks := []string{q.k.Run(), q.k.Progress(), q.k.Band(min(max(f.Band, 0), Bands-1))}
	args := []string{ulid, itoa(f.Run), v, Group, f.Worker, f.EntryID, f.Started, itoa(f.Band)}
	n, err := progressScript.Exec(ctx, q.s.r, ks, args).AsInt64()
	return n == 1, err
}

// parseProgress reads a value of the progress hash; false for none.
func parseProgress(v string) (Progress, bool) {
	p := strings.SplitN(v, "|", 4)
	if len(p) != 4 {
		return Progress{}, false
	}
	f, err := strconv.ParseFloat(p[2], 64)
	if err != nil {
		return Progress{}, false
	}
	return Progress{Run: atoi(p[0]), At: atoi64(p[1]), Fraction: f, Note: p[3]}, true
}

// SweepProgress deletes, from up to 1,000 fields of the progress hash
// from cursor on, those of tasks no longer running under the run that
// reported them (ended by a takeover or a cancellation, whose scripts
// leave them). It returns the cursor to go on from ("0" once around).
func (q *Queue) SweepProgress(ctx context.Context, cursor string) (string, error) {
	c := q.s.r
	if cursor == "" {
		cursor = "0"
	}
	cur, _ := strconv.ParseUint(cursor, 10, 64)
	e, err := c.Do(ctx, c.B().Hscan().Key(q.k.Progress()).Cursor(cur).Count(1000).Build()).AsScanEntry()
	if err != nil {
		return cursor, err
	}
	if len(e.Elements) == 0 {
		return strconv.FormatUint(e.Cursor, 10), nil
	}
	ulids := make([]string, 0, len(e.Elements)/2)
	runs := make([]int, 0, len(e.Elements)/2)
	for i := 0; i+1 < len(e.Elements); i += 2 {
		p, _ := parseProgress(e.Elements[i+1])
		ulids, runs = append(ulids, e.Elements[i]), append(runs, p.Run)
	}
	states, err := c.Do(ctx, c.B().Hmget().Key(q.k.Run()).Field(ulids...).Build()).ToArray()
	if err != nil {
		return cursor, err
	}
	var gone []string
	for i, s := range states {
		v, err := s.ToString()
		rs, running := parseRun(v)
		if rueidis.IsRedisNil(err) || !running || rs.run != runs[i] {
			gone = append(gone, ulids[i])
		}
	}
	if len(gone) > 0 {
		// A task whose next run reports between the read and this delete
		// loses that report until it reports again: progress is a hint.
		if err := c.Do(ctx, c.B().Hdel().Key(q.k.Progress()).Field(gone...).Build()).Error(); err != nil {
			return cursor, err
		}
	}
	return strconv.FormatUint(e.Cursor, 10), nil
}
