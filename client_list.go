package dtq

import (
	"context"
	"math"
	"strconv"
	"strings"

	"github.com/dtq-dev/dtq/internal/keys"
)

// ListOpts selects tasks for Client.List.
type ListOpts struct {
	Queue  string // required
	Status Status // "" for any
	Type   string // "" for any
	// Limit is the page size, 1-500. Defaults to 50.
	Limit int
	// Cursor continues after a previous page ("" for the first page).
	Cursor string
}

// TaskPage is one page of List.
type TaskPage struct {
	Tasks []*Task `json:"tasks"`
	// Next is the cursor of the next page; "" when there are no more.
	Next string `json:"next_cursor"`
}

// listScanBudget bounds how many tasks one List call examines when a status
// or type filter skips most of them; the page may then be short, with a
// cursor to continue.
const listScanBudget = 5000

// List returns a page of tasks of a queue, newest first (SCHEDULED tasks:
// earliest due first), optionally of one status and type. Finished tasks are
// listed until they expire.
func (c *Client) List(ctx context.Context, o ListOpts) (*TaskPage, error) {
	if err := keys.CheckName("queue", o.Queue); err != nil {
		return nil, invalid("queue", "%v", err)
	}
	if o.Status != "" && !o.Status.valid() {
		return nil, invalid("status", "must be one of QUEUED, SCHEDULED, RUNNING, SUCCEEDED, DEAD, CANCELLED (got %q)", o.Status)
	}
	switch {
	case o.Limit < 0 || o.Limit > 500:
		return nil, invalid("limit", "must be 1-500 (got %d)", o.Limit)
	case o.Limit == 0:
		o.Limit = 50
	}
	k := keys.NewTasks(c.cfg.Namespace, o.Queue)
	if o.Status == StatusScheduled {
		return c.listScheduled(ctx, k, o)
	}
	// The index: task ids by creation time. The cursor is "<score>:<n>", n
	// being how many ids with that score were already listed.
	score, skip := "+inf", int64(0)
	if o.Cursor != "" {
		s, n, ok := strings.Cut(o.Cursor, ":")
		nn, err := strconv.ParseInt(n, 10, 64)
		f, ferr := strconv.ParseFloat(s, 64)
		if !ok || err != nil || nn < 0 || ferr != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, invalid("cursor", "is not a cursor from a previous page")
		}
		score, skip = s, nn
	}
	page := &TaskPage{Tasks: []*Task{}}
	examined := 0
	for examined < listScanBudget {
		batch := int64(max(o.Limit, 100))
		zs, err := c.redis.Do(ctx, c.redis.B().Zrevrangebyscore().Key(k.Index()).Max(score).Min("-inf").
			Withscores().Limit(skip, batch).Build()).AsZScores()
		if err != nil {
			return nil, err
		}
		if len(zs) == 0 {
			return page, nil
		}
		ids := make([]string, len(zs))
		for i, z := range zs {
			ids[i] = z.Member
		}
		tasks, err := c.getMany(ctx, ids)
		if err != nil {
			return nil, err
		}
		for i, t := range tasks {
			examined++
			// Advance the cursor past this id.
			s := strconv.FormatFloat(zs[i].Score, 'f', -1, 64)
			if s == score {
				skip++
			} else {
				score, skip = s, 1
			}
			if t == nil || (o.Status != "" && t.Status != o.Status) || (o.Type != "" && t.Type != o.Type) {
				continue
			}
			page.Tasks = append(page.Tasks, t)
			if len(page.Tasks) == o.Limit {
				page.Next = score + ":" + strconv.FormatInt(skip, 10)
				return page, nil
			}
		}
		if int64(len(zs)) < batch {
			return page, nil
		}
	}
	page.Next = score + ":" + strconv.FormatInt(skip, 10)
	return page, nil
}

func (c *Client) listScheduled(ctx context.Context, k keys.Tasks, o ListOpts) (*TaskPage, error) {
	start := int64(0)
	if o.Cursor != "" {
		n, err := strconv.ParseInt(o.Cursor, 10, 64)
		if err != nil || n < 0 {
			return nil, invalid("cursor", "is not a cursor from a previous page")
		}
		start = n
	}
	page := &TaskPage{Tasks: []*Task{}}
	for examined := 0; examined < listScanBudget; {
		ids, err := c.redis.Do(ctx, c.redis.B().Zrange().Key(k.Schedule()).Min(strconv.FormatInt(start, 10)).
			Max(strconv.FormatInt(start+int64(o.Limit)-1, 10)).Build()).AsStrSlice()
		if err != nil {
			return nil, err
		}
		tasks, err := c.getMany(ctx, ids)
		if err != nil {
			return nil, err
		}
		for _, t := range tasks {
			examined++
			start++
			if t != nil && (o.Type == "" || t.Type == o.Type) {
				page.Tasks = append(page.Tasks, t)
				if len(page.Tasks) == o.Limit {
					page.Next = strconv.FormatInt(start, 10)
					return page, nil
				}
			}
		}
		if len(ids) < o.Limit {
			return page, nil
		}
	}
	page.Next = strconv.FormatInt(start, 10)
	return page, nil
}
