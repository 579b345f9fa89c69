package store

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/rueidis"
)

// The workflow index (Keys.Workflows) lists a queue's workflows by
// creation time. workflow.lua adds a workflow in the step that writes it;
// nothing removes it when the workflow's hash expires or is deleted, so a
// listing skips (and removes) the entries it finds gone, and Trim sweeps
// the index a bounded slice at a time (SweepWorkflows): the index holds
// the live workflows and those gone since the sweep last passed them.

// WorkflowQuery selects workflows for ListWorkflows.
type WorkflowQuery struct {
	Status string // "" for any
	// After and Before (Unix ms, 0: open) keep the workflows created in
	// [After, Before).
	After, Before int64
	Limit         int
	Cursor        string // "" for the newest
}

// workflowChunk is how many index entries one read takes; workflowScan is
// the most one ListWorkflows call reads before it answers a short page
// with a cursor (a status filter that matches few).
const (
	workflowChunk = 200
	workflowScan  = 5000
)

// ListWorkflows returns a page of the queue's workflows, newest first, and
// the cursor of the next page ("" at the end). The records have each
// node's kind, structure and state, not the plan's payloads or results. A
// filter that skips most workflows may give a short page with a cursor.
func (q *Queue) ListWorkflows(ctx context.Context, wq WorkflowQuery) ([]*WorkflowRecord, string, error) {
	c := q.s.r
	top := "+inf"
	if wq.Before > 0 {
		top = "(" + strconv.FormatInt(wq.Before, 10)
	}
	var curScore int64
	var curULID string
	if wq.Cursor != "" {
		s, u, ok := strings.Cut(wq.Cursor, ":")
		n, err := strconv.ParseInt(s, 10, 64)
		if !ok || err != nil || n < 0 || len(u) != 26 {
			return nil, "", ErrBadCursor
		}
		curScore, curULID = n, u
		if wq.Before == 0 || n < wq.Before {
			top = s
		}
	}
	bottom := "-inf"
	if wq.After > 0 {
		bottom = strconv.FormatInt(wq.After, 10)
	}
	var out []*WorkflowRecord
	var gone []string
	offset, scanned := int64(0), 0
	next := ""
	for {
		zs, err := c.Do(ctx, c.B().Zrevrangebyscore().Key(q.k.Workflows()).Max(top).Min(bottom).Withscores().
			Limit(offset, workflowChunk).Build()).AsZScores()
		if err != nil {
			return nil, "", err
		}
		var ulids []string
		var scores []int64
		for _, z := range zs {
			sc := int64(z.Score)
			if wq.Cursor != "" && sc == curScore && z.Member >= curULID {
				continue // on the previous page
			}
			ulids, scores = append(ulids, z.Member), append(scores, sc)
		}
		recs, err := q.workflowHeads(ctx, ulids)
		if err != nil {
			return nil, "", err
		}
		full := false
		for i, r := range recs {
			scanned++
			switch {
			case r == nil:
				gone = append(gone, ulids[i])
				continue
			case wq.Status != "" && r.Status != wq.Status:
			default:
				out = append(out, r)
			}
			if len(out) == wq.Limit || scanned >= workflowScan {
				full = true
				if i < len(recs)-1 || len(zs) == workflowChunk { // more may follow
					next = strconv.FormatInt(scores[i], 10) + ":" + ulids[i]
				}
				break
			}
		}
		if full || len(zs) < workflowChunk {
			break
		}
		// Go on below the last entry read: those of its score were read.
		last := int64(zs[len(zs)-1].Score)
		same := int64(0)
		for j := len(zs) - 1; j >= 0 && int64(zs[j].Score) == last; j-- {
			same++
		}
		if ls := strconv.FormatInt(last, 10); ls == top {
			offset += same
		} else {
			top, offset = ls, same
		}
	}
	if len(gone) > 0 {
		_ = c.Do(ctx, c.B().Zrem().Key(q.k.Workflows()).Member(gone...).Build()).Error() // a sweep does it otherwise
	}
	if err := q.workflowStates(ctx, out); err != nil {
		return nil, "", err
	}
	return out, next, nil
}

// workflowHeadFields are the fields ListWorkflows reads of each
// workflow first; its error is its root node's why.
var workflowHeadFields = []string{WFStatus, WFCreated, WFFinished, WFCancel, WFNodes, WFNodeWhy + "0"}

// workflowHeads reads the head fields of workflows ulids in one round trip;
// nil for one that is gone.
func (q *Queue) workflowHeads(ctx context.Context, ulids []string) ([]*WorkflowRecord, error) {
	c := q.s.r
	cmds := make(rueidis.Commands, len(ulids))
	for i, u := range ulids {
		cmds[i] = c.B().Hmget().Key(q.k.Workflow(u)).Field(workflowHeadFields...).Build()
	}
	out := make([]*WorkflowRecord, len(ulids))
	for i, res := range c.DoMulti(ctx, cmds...) {
		v, err := res.ToArray()
		if err != nil {
			return nil, err
		}
		h := map[string]string{}
		for j, f := range workflowHeadFields {
			if s, err := v[j].ToString(); err == nil {
				h[f] = s
			}
		}
		if h[WFStatus] == "" {
			continue
		}
		r := workflowOf(q.name, ulids[i], h)
		r.Nodes = nil
		r.nodeCount = atoi(h[WFNodes])
		r.rootWhy = h[WFNodeWhy+"0"]
		out[i] = r
	}
	return out, nil
}

// workflowStates reads the kind, structure and state of every node of
// each of rs (not the payloads or results), in one round trip.
func (q *Queue) workflowStates(ctx context.Context, rs []*WorkflowRecord) error {
	if len(rs) == 0 {
		return nil
	}
	c := q.s.r
	prefixes := []string{WFNodeKind, WFNodeKids, WFNodeOnOK, WFNodeOnEnd, WFNodeState}
	cmds := make(rueidis.Commands, len(rs))
	fields := make([][]string, len(rs))
	for i, r := range rs {
		fs := make([]string, 0, len(prefixes)*r.nodeCount+1)
		for n := range r.nodeCount {
			for _, p := range prefixes {
				fs = append(fs, p+strconv.Itoa(n))
			}
		}
		if len(fs) == 0 {
			fs = append(fs, WFStatus)
		}
		fields[i] = fs
		cmds[i] = c.B().Hmget().Key(q.k.Workflow(r.ID[len(r.Queue)+1:])).Field(fs...).Build()
	}
	for i, res := range c.DoMulti(ctx, cmds...) {
		v, err := res.ToArray()
		if err != nil {
			return err
		}
		r := rs[i]
		h := map[string]string{WFStatus: r.Status, WFNodes: strconv.Itoa(r.nodeCount), WFNodeWhy + "0": r.rootWhy}
		for j, f := range fields[i] {
			if s, err := v[j].ToString(); err == nil && f != WFStatus {
				h[f] = s
			}
		}
		w := workflowOf(r.Queue, r.ID[len(r.Queue)+1:], h)
		r.Nodes = w.Nodes
	}
	return nil
}

// sweepChunks bounds one SweepWorkflows call: this many reads of
// workflowChunk entries.
const sweepChunks = 10

// SweepWorkflows takes out of the workflow index the entries of
// workflows that are gone, reading on from where this Queue value's last
// sweep stopped (a creation time; another process, or a new leader,
// starts at the oldest) and starting over at the oldest once it reached
// the newest. It reads at most sweepChunks*workflowChunk entries — one
// read when the index is empty — and returns how many it removed.
func (q *Queue) SweepWorkflows(ctx context.Context) (int, error) {
	c := q.s.r
	from := strconv.FormatInt(q.wfSweep.Load(), 10)
	removed := 0
	for range sweepChunks {
		zs, err := c.Do(ctx, c.B().Zrangebyscore().Key(q.k.Workflows()).Min(from).Max("+inf").Withscores().
			Limit(0, workflowChunk).Build()).AsZScores()
		if err != nil {
			return removed, err
		}
		if len(zs) > 0 {
			cmds := make(rueidis.Commands, len(zs))
			for i, z := range zs {
				cmds[i] = c.B().Exists().Key(q.k.Workflow(z.Member)).Build()
			}
			var gone []string
			for i, res := range c.DoMulti(ctx, cmds...) {
				n, err := res.AsInt64()
				if err != nil {
					return removed, err
				}
				if n == 0 {
					gone = append(gone, zs[i].Member)
				}
			}
			if len(gone) > 0 {
				if err := c.Do(ctx, c.B().Zrem().Key(q.k.Workflows()).Member(gone...).Build()).Error(); err != nil {
					return removed, err
				}
				removed += len(gone)
			}
		}
		if len(zs) < workflowChunk {
			from = "0" // the newest reached: start over next time
			break
		}
		last := int64(zs[len(zs)-1].Score)
		if strconv.FormatInt(last, 10) == from {
			last++ // a chunk of one creation time: go past it
		}
		from = strconv.FormatInt(last, 10)
	}
	n, _ := strconv.ParseInt(from, 10, 64)
	q.wfSweep.Store(n)
	return removed, nil
}
