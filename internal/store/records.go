package store

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/dtq-dev/dtq/internal/taskid"
	"github.com/redis/rueidis"
)

// Get returns the record of task id, nil when there is none (unknown,
// expired, or not a task id).
func (s *Store) Get(ctx context.Context, id string) (*Record, error) {
	rs, err := s.GetMany(ctx, []string{id})
	if err != nil {
		return nil, err
	}
	return rs[0], nil
}

// GetWithSteps is Get with the task's durable step records (Record.Steps),
// read in the same round trip.
func (s *Store) GetWithSteps(ctx context.Context, id string) (*Record, error) {
	rs, err := s.getMany(ctx, []string{id}, nil, true)
	if err != nil {
		return nil, err
	}
	return rs[0], nil
}

// GetMany returns the records of ids in one round trip; missing ones are
// nil.
func (s *Store) GetMany(ctx context.Context, ids []string) ([]*Record, error) {
	return s.getMany(ctx, ids, nil, false)
}

// located is a task id read with its record.
type located struct {
	id, queue, ulid string
	band            int
	eid             string // its birth entry, "" for a random id
}

// mayBeLight reports whether l may be an ordered task without a hash
// (Keys.OrderIndex): a valid id that names no birth entry.
func (l located) mayBeLight() bool { return l.eid == "" && l.ulid != invalidULID }

// getMany reads the records of ids; entries, when given, holds the fields
// of birth entries already read (by entry id), which are not read again.
// Per task it reads its birth entry when the id names one, its Run field,
// its hash and its packed record — in that order, the order a task moves
// through them, so that a task moving on between two reads is seen in its
// later place: in one round trip for all.
//
// With steps it reads each task's step records too (Record.Steps).
func (s *Store) getMany(ctx context.Context, ids []string, entries map[string]map[string]string, steps bool) ([]*Record, error) {
	c := s.r
	locs := make([]located, len(ids))
	cmds := make(rueidis.Commands, 0, 5*len(ids))
	for i, id := range ids {
		l := located{id: id}
		q, ulid, err := taskid.Parse(id)
		if err != nil {
			l.queue, l.ulid = "invalid", invalidULID
		} else {
			l.queue, l.ulid = q, ulid
			if band, eid, ok := taskid.Entry(ulid); ok {
				l.band, l.eid = band, eid
			}
		}
		locs[i] = l
		k := NewKeys(s.ns, l.queue)
		if l.eid != "" && entries[l.eid] == nil {
			cmds = append(cmds, c.B().Xrange().Key(k.Band(l.band)).Start(l.eid).End(l.eid).Build())
		}
		cmds = append(cmds, c.B().Hget().Key(k.Run()).Field(l.ulid).Build(), c.B().Hgetall().Key(k.Task(l.ulid)).Build(),
			c.B().Hget().Key(k.Finished()).Field(l.ulid).Build(), c.B().Hget().Key(k.Progress()).Field(l.ulid).Build())
		if steps {
			cmds = append(cmds, c.B().Hgetall().Key(k.Steps(l.ulid)).Build())
		}
		if l.mayBeLight() {
			cmds = append(cmds, c.B().Hget().Key(k.OrderIndex()).Field(l.ulid).Build())
		}
	}
	if len(cmds) == 0 {
		return nil, nil
	}
	res := c.DoMulti(ctx, cmds...)
	out := make([]*Record, len(ids))
	var waiting []int      // looked QUEUED from their birth entry alone
	var inLine []lineCheck // their hashes say they wait for their order keys
	var light []lightCand  // no hash's type and no birth entry: found through OrderIndex
	j := 0
	str := func(r rueidis.RedisResult) (string, error) {
		v, err := r.ToString()
		if rueidis.IsRedisNil(err) {
			return "", nil
		}
		return v, err
	}
	for i, l := range locs {
		var e map[string]string
		if l.eid != "" {
			if e = entries[l.eid]; e == nil {
				xs, err := res[j].AsXRange()
				j++
				if err != nil {
					return nil, err
				}
				if len(xs) == 1 {
					e = xs[0].FieldValues
				}
			}
		}
		run, err := str(res[j])
		if err != nil {
			return nil, err
		}
		h, err := res[j+1].AsStrMap()
		if err != nil {
			return nil, err
		}
		packed, err := str(res[j+2])
		if err != nil {
			return nil, err
		}
		prog, err := str(res[j+3])
		if err != nil {
			return nil, err
		}
		j += 4
		var recs map[string]StepRecord
		if steps {
			m, err := res[j].AsStrMap()
			if err != nil {
				return nil, err
			}
			j++
			for name, v := range m {
				if sr, ok := parseStep(v); ok {
					if recs == nil {
						recs = map[string]StepRecord{}
					}
					recs[name] = sr
				}
			}
		}
		index := ""
		if l.mayBeLight() {
			if index, err = str(res[j]); err != nil {
				return nil, err
			}
			j++
		}
		if packed != "" {
			if out[i] = parseRecord(l.id, l.queue, packed); out[i] != nil {
				out[i].Steps = recs
			}
			continue
		}
		if _, typed := h[FieldType]; !typed && index != "" {
			// an ordered task without a hash (Keys.OrderIndex)
			light = append(light, lightCand{i: i, l: l, index: index, run: run, h: h, prog: prog, steps: recs})
			continue
		}
		r := buildRecord(l, h, e, l.band, l.eid, run, prog, recs)
		out[i] = r
		_, running := parseRun(run)
		if r != nil && len(h) == 0 && !running && e != nil {
			waiting = append(waiting, i)
		}
		if r != nil && r.OrderWaiting {
			inLine = append(inLine, lineCheck{i: i, queue: l.queue, field: h[FieldOrderWait], ulid: l.ulid})
		}
	}
	if len(waiting) > 0 {
		if err := s.dropAcknowledged(ctx, locs, out, waiting); err != nil {
			return nil, err
		}
	}
	if len(light) > 0 {
		if err := s.findLight(ctx, out, light); err != nil {
			return nil, err
		}
	}
	if len(inLine) > 0 {
		if err := s.confirmInLine(ctx, out, inLine); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// buildRecord builds the record of task l from its hash h, the entry e it
// is in (band, eid; nil when none), its Run field run, its progress report
// prog and its step records steps; nil when none of them holds the task.
func buildRecord(l located, h, e map[string]string, band int, eid, run, prog string, steps map[string]StepRecord) *Record {
	r := recordOf(l.id, l.queue, h, e, band, eid)
	rs, running := parseRun(run)
	if st := h[FieldStatus]; running && (st == "" || st == StatusRunning) {
		// Running: the Run field has the run's state (a status the
		// hash holds besides was written after it was read).
		if r == nil {
			r = &Record{ID: l.id, Queue: l.queue}
		}
		r.withRun(rs)
		if p, ok := parseProgress(prog); ok && p.Run == rs.run {
			r.Progress = &p
		}
	}
	if r != nil {
		r.Steps = steps
	}
	return r
}

// dropAcknowledged clears the records of out[waiting] — tasks that looked
// QUEUED from their birth entry alone — whose entry was delivered and is no
// longer pending: acknowledged, left behind a running task until the band
// is trimmed, of a task finished and gone.
func (s *Store) dropAcknowledged(ctx context.Context, locs []located, out []*Record, waiting []int) error {
	c := s.r
	type band struct {
		queue string
		p     int
	}
	last := map[band]string{}
	var order []band
	for _, i := range waiting {
		b := band{locs[i].queue, locs[i].band}
		if _, ok := last[b]; !ok {
			last[b] = ""
			order = append(order, b)
		}
	}
	cmds := make(rueidis.Commands, len(order))
	for j, b := range order {
		cmds[j] = c.B().XinfoGroups().Key(NewKeys(s.ns, b.queue).Band(b.p)).Build()
	}
	for j, r := range c.DoMulti(ctx, cmds...) {
		groups, err := r.ToArray()
		if err != nil {
			continue // no stream or group: nothing delivered
		}
		for _, g := range groups {
			m, err := g.AsStrMap()
			if err == nil && m["name"] == Group {
				last[order[j]] = m["last-delivered-id"]
			}
		}
	}
	var check []int
	cmds = cmds[:0]
	for _, i := range waiting {
		l := locs[i]
		if lastID := last[band{l.queue, l.band}]; lastID != "" && !idAfter(l.eid, lastID) {
			check = append(check, i)
			k := NewKeys(s.ns, l.queue)
			// Pending? Then the record again: it may have finished since.
			cmds = append(cmds, c.B().Xpending().Key(k.Band(l.band)).Group(Group).Start(l.eid).End(l.eid).Count(1).Build(),
				c.B().Hget().Key(k.Run()).Field(l.ulid).Build(), c.B().Hgetall().Key(k.Task(l.ulid)).Build(),
				c.B().Hget().Key(k.Finished()).Field(l.ulid).Build(),
				c.B().Hmget().Key(k.Info()).Field(InfoPaused, InfoPausedAt).Build())
		}
	}
	if len(cmds) == 0 {
		return nil
	}
	// TIME first: the clock read before the XPENDINGs' idle times, so that
	// a delivery's time (now - idle) errs early — a claim is taken as
	// given back only when sure.
	cmds = append(rueidis.Commands{c.B().Time().Build()}, cmds...)
	res := c.DoMulti(ctx, cmds...)
	t, _ := res[0].AsStrSlice()
	now, _ := redisMs(t) // 0 when unread: no claim is taken as given back
	res = res[1:]
	for j, i := range check {
		r := res[5*j : 5*j+5]
		pend, err := r[0].ToArray()
		if err != nil {
			return err
		}
		if len(pend) > 0 {
			// Claimed, with no Run field: running as an implicit first
			// run (StartImplicit), or about to start. Its start is its
			// delivery's, exact until its first renewal gives it a Run
			// field. Claimed after its queue's pause, it is about to be
			// given back (nothing starts on a paused queue): still QUEUED.
			if out[i] != nil && out[i].Status == StatusQueued && !claimedWhilePaused(r[4], pend[0], now) {
				out[i].withRun(implicitRun(pend[0]))
			}
			continue
		}
		l := locs[i]
		run, _ := r[1].ToString()
		h, _ := r[2].AsStrMap()
		packed, _ := r[3].ToString()
		switch rs, running := parseRun(run); {
		case packed != "":
			out[i] = parseRecord(l.id, l.queue, packed)
		case len(h) > 0:
			out[i] = recordOf(l.id, l.queue, h, nil, l.band, l.eid)
			if running {
				out[i].withRun(rs)
			}
		case running:
			out[i].withRun(rs)
		default:
			out[i] = nil // acknowledged, its task finished and gone
		}
	}
	return nil
}

// claimedWhilePaused reports whether a pending entry (XPENDING's id,
// consumer, idle ms, deliveries) was delivered after its queue's pause was
// written (info's paused and paused_at, an HMGET reply), now being Redis
// time in Unix ms (0: unknown). Such a claim is not started: start.lua and
// StartImplicit read the flag after the claim.
func claimedWhilePaused(info rueidis.RedisResult, pend rueidis.RedisMessage, now int64) bool {
	f, err := info.AsStrSlice()
	if err != nil || len(f) != 2 || f[0] != "1" || now == 0 {
		return false
	}
	at, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return false
	}
	p, err := pend.ToArray()
	if err != nil || len(p) < 4 {
		return false
	}
	idle, err := p[2].AsInt64()
	// (2 ms of margin: idle and now are whole ms, so a claim made just
	// before the pause may compute up to 2 ms late — it reads RUNNING
	// when unsure)
	return err == nil && now-idle > at+2
}

// implicitRun is the run state of an implicit first run from its pending
// entry (XPENDING's id, consumer, idle ms, deliveries).
func implicitRun(pend rueidis.RedisMessage) runState {
	rs := runState{run: 1, attempt: 1}
	f, err := pend.ToArray()
	if err != nil || len(f) < 4 {
		return rs
	}
	rs.worker, _ = f[1].ToString()
	if idle, err := f[2].AsInt64(); err == nil {
		rs.started = time.Now().UnixMilli() - idle
	}
	return rs
}

// idAfter reports whether stream entry id a is after b.
func idAfter(a, b string) bool {
	am, as, _ := strings.Cut(a, "-")
	bm, bs, _ := strings.Cut(b, "-")
	ami, bmi := atoi64(am), atoi64(bm)
	if ami != bmi {
		return ami > bmi
	}
	asi, _ := strconv.ParseUint(as, 10, 64)
	bsi, _ := strconv.ParseUint(bs, 10, 64)
	return asi > bsi
}

// Counts is what a queue holds now, and its totals.
type Counts struct {
	Paused           bool
	QueuedByPriority [Bands]int64
	Scheduled        int64
	// Suspended counts the SCHEDULED tasks whose execution suspended
	// (Keys.Suspended): part of Scheduled.
	Suspended int64
	// GroupWaiting counts the QUEUED tasks waiting for their group's turn
	// (GroupWait); QueuedByPriority counts those in the bands.
	GroupWaiting int64
	// ScopeWaiting counts the QUEUED tasks full scoped concurrency limits
	// hold back (ScopeWait).
	ScopeWaiting int64
	// OrderWaiting counts the QUEUED tasks waiting for their order key
	// (OrderWait).
	OrderWaiting int64
	Running      int64
	Dead         int64 // in the dead-letter stream
	// Totals since the queue was created. Submitted is derived: every task
	// submitted is unfinished or was counted when it finished (less those
	// requeued from the dead letters, counted twice).
	Submitted, Succeeded, Retried, Failed, Cancelled int64
}

// Counts reads what each queue of names holds, in one round trip.
func (s *Store) Counts(ctx context.Context, names []string) ([]Counts, error) {
	c := s.r
	const per = 7 + 2*Bands
	cmds := make(rueidis.Commands, 0, per*len(names))
	for _, n := range names {
		k := NewKeys(s.ns, n)
		cmds = append(cmds, c.B().Hgetall().Key(k.Info()).Build(), c.B().Zcard().Key(k.Schedule()).Build(),
			c.B().Xlen().Key(k.DLQ()).Build(), c.B().Zcard().Key(k.GroupWait()).Build(),
			c.B().Zcard().Key(k.ScopeWait()).Build(), c.B().Zcard().Key(k.Suspended()).Build(),
			c.B().Hlen().Key(k.OrderLine()).Build())
		for p := range Bands {
			cmds = append(cmds, c.B().Xlen().Key(k.Band(p)).Build(), c.B().Xpending().Key(k.Band(p)).Group(Group).Build())
		}
	}
	if len(cmds) == 0 {
		return nil, nil
	}
	res := c.DoMulti(ctx, cmds...)
	out := make([]Counts, len(names))
	for i := range names {
		r := res[i*per : (i+1)*per]
		info, err := r[0].AsStrMap()
		if err != nil {
			return nil, err
		}
		num := func(f string) int64 { return atoi64(info[f]) }
		ct := &out[i]
		ct.Paused = info[InfoPaused] == "1"
		ct.Succeeded, ct.Retried, ct.Failed, ct.Cancelled = num(InfoSucceeded), num(InfoRetried), num(InfoDead), num(InfoCancelled)
		ct.Scheduled, _ = r[1].AsInt64()
		behind := func(p int) int64 { return max(0, num(InfoBehind+strconv.Itoa(p))) }
		ct.Dead, _ = r[2].AsInt64()
		var queued int64
		for p := range Bands {
			n, err := r[7+2*p].AsInt64()
			if err != nil {
				return nil, err
			}
			pend, err := pendingCount(r[8+2*p])
			if err != nil {
				return nil, err
			}
			ct.QueuedByPriority[p] = max(0, n-pend-behind(p))
			queued += ct.QueuedByPriority[p]
			ct.Running += pend
		}
		ct.GroupWaiting, _ = r[3].AsInt64()
		ct.ScopeWaiting, _ = r[4].AsInt64()
		ct.Suspended, _ = r[5].AsInt64()
		ct.OrderWaiting, _ = r[6].AsInt64()
		ct.Submitted = max(0, ct.Succeeded+ct.Failed+ct.Cancelled+queued+ct.GroupWaiting+ct.ScopeWaiting+ct.OrderWaiting+ct.Scheduled+ct.Running-
			num(InfoRequeued))
	}
	return out, nil
}

// ListQuery selects records for List.
type ListQuery struct {
	Status string // "" for any
	Type   string // "" for any
	// Suspended keeps only the suspended tasks (SCHEDULED after their
	// execution suspended), earliest due first.
	Suspended bool
	// IDPrefix keeps the tasks whose id starts with it; ErrorContains
	// (lower case) those whose last error contains it in any letter case;
	// After and Before (Unix ms, 0: open) those created in that range.
	IDPrefix      string
	ErrorContains string
	After, Before int64
	Limit         int
	Cursor        string // "" for the first page
}

// match reports whether r passes lq's filters besides its section's.
func (lq *ListQuery) match(r *Record) bool {
	switch {
	case lq.Type != "" && r.Type != lq.Type, lq.Status != "" && r.Status != lq.Status:
		return false
	case lq.IDPrefix != "" && !strings.HasPrefix(r.ID, lq.IDPrefix):
		return false
	case lq.ErrorContains != "" && !strings.Contains(strings.ToLower(r.Error), lq.ErrorContains):
		return false
	case lq.After > 0 && r.Created < lq.After, lq.Before > 0 && r.Created >= lq.Before:
		return false
	}
	return true
}

// ErrBadCursor is returned by List for a cursor no page produced.
var ErrBadCursor = errorString("store: not a cursor from a previous page")

type errorString string

func (e errorString) Error() string { return string(e) }

// listScanBudget bounds how many tasks one List call examines when a status
// or type filter skips most of them; the page may then be short, with a
// cursor to continue.
const listScanBudget = 5000

// List returns a page of the queue's records and the cursor of the next
// ("" at the end). Records come section by section: tasks in the bands
// (running and queued: priority 9 first, oldest first within a band — the
// order they run in), SCHEDULED ones (earliest due first), DEAD ones in the
// dead-letter stream (newest first), then finished ones (most recently
// finished first). A status visits only its sections.
func (q *Queue) List(ctx context.Context, lq ListQuery) ([]*Record, string, error) {
	sections := "bwlsxd"
	switch lq.Status {
	case StatusQueued:
		sections = "bwl"
	case StatusRunning:
		sections = "b"
	case StatusScheduled:
		sections = "s"
	case StatusDead:
		sections = "xd"
	case StatusSucceeded, StatusCancelled:
		sections = "d"
	}
	if lq.Suspended {
		sections = "u"
	}
	cur, err := parseCursor(lq.Cursor, sections)
	if err != nil {
		return nil, "", err
	}
	keep := func(r *Record, section byte) bool {
		if r == nil || !lq.match(r) {
			return false
		}
		switch section {
		case 'b': // a leftover entry of a task now elsewhere is skipped
			return r.Status == StatusQueued || r.Status == StatusRunning
		case 'w':
			return r.GroupWaiting
		case 'l':
			return r.Status == StatusQueued && r.Throttled != ""
		case 's':
			return r.Status == StatusScheduled
		case 'u':
			return r.Status == StatusScheduled && r.Wait != ""
		case 'x':
			return r.Status == StatusDead
		}
		return r.Status == StatusSucceeded || r.Status == StatusCancelled || r.Status == StatusDead
	}
	var page []*Record
	examined := 0
	batch := max(lq.Limit, 100)
	for examined < listScanBudget {
		ids, entries, next, more, err := q.listBatch(ctx, cur, batch)
		if err != nil {
			return nil, "", err
		}
		recs, err := q.s.getMany(ctx, ids, entries, false)
		if err != nil {
			return nil, "", err
		}
		for i, r := range recs {
			examined++
			cur.pos = next[i]
			if keep(r, cur.section) {
				page = append(page, r)
				if len(page) == lq.Limit {
					return page, cur.String(), nil
				}
			}
		}
		if !more && !cur.advance(sections) {
			return page, "", nil
		}
	}
	return page, cur.String(), nil
}

// cursor is a position in List's sections: section b (pos "<band>:<entry
// id>", after that entry), w (pos: after that member of GroupWait), l
// (pos: offset in ScopeWait), s (pos: offset in the schedule), x (pos: before
// that entry id, newest first), d (pos "<entry id>:<k>", newest first).
type cursor struct {
	section byte
	pos     string
}

func (c cursor) String() string { return string(c.section) + c.pos }

func startOf(section byte) string {
	switch section {
	case 'b':
		return "9:-"
	case 's', 'l', 'u':
		return "0"
	case 'w':
		return "-"
	}
	return "+"
}

func parseCursor(s, sections string) (cursor, error) {
	if s == "" {
		return cursor{section: sections[0], pos: startOf(sections[0])}, nil
	}
	c := cursor{section: s[0], pos: s[1:]}
	if strings.IndexByte(sections, c.section) < 0 {
		return c, ErrBadCursor
	}
	switch c.section {
	case 'b':
		b, eid, ok := strings.Cut(c.pos, ":")
		band, err := strconv.Atoi(b)
		if !ok || err != nil || band < 0 || band >= Bands || (eid != "-" && !streamID(eid)) {
			return c, ErrBadCursor
		}
	case 's', 'l', 'u':
		if n, err := strconv.ParseInt(c.pos, 10, 64); err != nil || n < 0 {
			return c, ErrBadCursor
		}
	case 'w':
		if _, _, ok := GroupMemberTask(c.pos); c.pos != "-" && !ok {
			return c, ErrBadCursor
		}
	case 'x':
		if c.pos != "+" && !streamID(c.pos) {
			return c, ErrBadCursor
		}
	case 'd':
		e, k, ok := strings.Cut(c.pos, ":")
		_, err := strconv.ParseUint(k, 10, 64)
		if c.pos != "+" && (!ok || err != nil || !streamID(e)) {
			return c, ErrBadCursor
		}
	}
	return c, nil
}

// advance moves c to the start of the next section (or, within the bands,
// the next band); false at the end of the last.
func (c *cursor) advance(sections string) bool {
	if c.section == 'b' {
		b, _, _ := strings.Cut(c.pos, ":")
		if band, _ := strconv.Atoi(b); band > 0 {
			c.pos = strconv.Itoa(band-1) + ":-"
			return true
		}
	}
	i := strings.IndexByte(sections, c.section)
	if i+1 >= len(sections) {
		return false
	}
	c.section = sections[i+1]
	c.pos = startOf(c.section)
	return true
}

// listBatch reads up to n task ids at c, with the cursor position after
// each, and the fields of the birth entries it read.
func (q *Queue) listBatch(ctx context.Context, c cursor, n int) (ids []string, entries map[string]map[string]string, next []string, more bool, err error) {
	r := q.s.r
	switch c.section {
	case 'b':
		b, after, _ := strings.Cut(c.pos, ":")
		band, _ := strconv.Atoi(b)
		start := after
		if after != "-" {
			start = "(" + after
		}
		xs, err := r.Do(ctx, r.B().Xrange().Key(q.k.Band(band)).Start(start).End("+").Count(int64(n)).Build()).AsXRange()
		if err != nil {
			return nil, nil, nil, false, err
		}
		entries = map[string]map[string]string{}
		for _, x := range xs {
			e := entryOf(q.name, band, x.ID, x.FieldValues)
			if e.Born || e.Malformed {
				entries[x.ID] = x.FieldValues
			}
			ids = append(ids, e.TaskID)
			next = append(next, b+":"+x.ID)
		}
		return ids, entries, next, len(xs) == n, nil
	case 's', 'u':
		key := q.k.Schedule()
		if c.section == 'u' {
			key = q.k.Suspended()
		}
		off, _ := strconv.ParseInt(c.pos, 10, 64)
		ids, err = r.Do(ctx, r.B().Zrange().Key(key).Min(strconv.FormatInt(off, 10)).
			Max(strconv.FormatInt(off+int64(n)-1, 10)).Build()).AsStrSlice()
		for i := range ids {
			next = append(next, strconv.FormatInt(off+int64(i)+1, 10))
		}
		return ids, nil, next, len(ids) == n, err
	case 'l':
		off, _ := strconv.ParseInt(c.pos, 10, 64)
		ms, err := r.Do(ctx, r.B().Zrange().Key(q.k.ScopeWait()).Min(strconv.FormatInt(off, 10)).
			Max(strconv.FormatInt(off+int64(n)-1, 10)).Build()).AsStrSlice()
		for i, m := range ms {
			if len(m) >= 26 {
				ids = append(ids, q.name+"-"+m[len(m)-26:])
				next = append(next, strconv.FormatInt(off+int64(i)+1, 10))
			}
		}
		return ids, nil, next, len(ms) == n, err
	case 'w':
		from := c.pos
		if from != "-" {
			from = "(" + from
		}
		ms, err := r.Do(ctx, r.B().Zrangebylex().Key(q.k.GroupWait()).Min(from).Max("+").Limit(0, int64(n)).Build()).AsStrSlice()
		for _, m := range ms {
			_, ulid, ok := GroupMemberTask(m)
			if !ok {
				continue
			}
			ids = append(ids, q.name+"-"+ulid)
			next = append(next, m)
		}
		return ids, nil, next, len(ms) == n, err
	}
	if c.section == 'x' {
		end := c.pos
		if end != "+" {
			end = "(" + end
		}
		xs, err := r.Do(ctx, r.B().Xrevrange().Key(q.k.DLQ()).End(end).Start("-").Count(int64(n)).Build()).AsXRange()
		for _, x := range xs {
			ids = append(ids, x.FieldValues[DeadID])
			next = append(next, x.ID)
		}
		return ids, nil, next, len(xs) == n, err
	}
	// d: the done stream, newest first; pos "<entry id>:<k>" continues in
	// that entry after the k ids (newest first) already listed.
	end, skip := "+", 0
	if c.pos != "+" {
		e, k, _ := strings.Cut(c.pos, ":")
		end, skip = e, atoi(k)
	}
	count := int64(max(2, n/16))
	xs, err := r.Do(ctx, r.B().Xrevrange().Key(q.k.Done()).End(end).Start("-").Count(count).Build()).AsXRange()
	for j, x := range xs {
		list := strings.Fields(x.FieldValues[DoneIDs])
		from := 0
		if j == 0 && x.ID == end {
			from = skip
		}
		for k := from; k < len(list); k++ {
			ids = append(ids, list[len(list)-1-k])
			next = append(next, x.ID+":"+strconv.Itoa(k+1))
		}
	}
	return ids, nil, next, int64(len(xs)) == count, err
}

// streamID reports whether s is a stream entry id, "<ms>-<seq>".
func streamID(s string) bool {
	a, b, ok := strings.Cut(s, "-")
	_, err1 := strconv.ParseUint(a, 10, 64)
	_, err2 := strconv.ParseUint(b, 10, 64)
	return ok && err1 == nil && err2 == nil
}
