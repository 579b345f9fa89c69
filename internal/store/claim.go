package store

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/dtq-dev/dtq/internal/delivery"
	"github.com/dtq-dev/dtq/internal/taskid"
	"github.com/redis/rueidis"
)

// Entry is one claimed band entry.
type Entry struct {
	Band    int
	EntryID string
	TaskID  string
	// Born: the task was born as this entry (it carries no EntryID).
	Born bool
	// Light: the entry of an ordered task without a hash (it carries
	// EntryOrderKey, Keys.OrderIndex): started and finished as a born
	// one, its id its EntryID.
	Light bool
	// Malformed: neither a task's birth entry nor an entry written again
	// (written by something else): Start dead-letters it.
	Malformed bool
	Reclaimed bool // taken over from a worker that stopped renewing it
	GiveBack  bool // for Start: put the entry back unstarted (a Reclaimed one once its lost run's crash is recorded)
	// Resumed, for Start: the caller claimed the entry but did not get the
	// answer of its claim or of its start (the connection failed with the
	// call in flight): a run of the caller's that the task holds goes on
	// (its start's answer was lost), else the entry starts as claimed.
	Resumed bool
	Spec    *Spec // the task's fields carried by the entry; nil when malformed
	// Group is the group an entry admitted under its group's window was
	// admitted under (EntryGroup): its start gives the group room.
	Group string
	// Scopes are the scoped limits the task is under, for Start (set by
	// the caller: ScopeType+type, ScopeKey+limit key); nil for none.
	Scopes []string
}

// BornSpec is what a FinishItem of the entry's task carries as Born: the
// entry's fields when its task has no hash of them (born as the entry, or
// a light ordered task's), else nil.
func (e *Entry) BornSpec() *Spec {
	if e.Born || e.Light {
		return e.Spec
	}
	return nil
}

// Spec is what a band entry carries of its task besides the id: its
// immutable fields, so that a worker needs no second read to start it.
type Spec struct {
	Type        string
	Payload     []byte
	MaxAttempts int
	Timeout     time.Duration
	Created     int64  // Unix ms
	IdemHash    string // "" for none
	Schedule    string // the schedule that fired the task, "" for none
	Tick        int64  // Unix ms of its tick
	LimitKey    string // the limit key it was submitted with, "" for none
	// Workflow is the ULID of the workflow the task is step Step of (""
	// for none); Prev the previous step's result it starts with (JSON,
	// nil for none).
	Workflow string
	Step     int
	Prev     []byte
	// Trace is the W3C traceparent of the task's submission ("" for none).
	Trace string
	// Parent is "<task id> <step>" of the task awaiting it (dtq.Child; ""
	// for none).
	Parent string
	// OrderKey is a light entry's order key (Entry.Light; "" otherwise).
	OrderKey string
}

// entryOf reads band entry eid with fields f of queue.
func entryOf(queue string, band int, eid string, f map[string]string) Entry {
	e := Entry{Band: band, EntryID: eid, Group: f[EntryGroup]}
	typ, hasType := f[EntryType]
	id, hasID := f[EntryID]
	switch {
	case hasID && hasType:
		e.TaskID = id
		e.Light = f[EntryOrderKey] != ""
	case hasType:
		e.Born = true
		e.TaskID, _ = taskid.FromEntry(queue, band, eid)
	default:
		e.Malformed = true
		e.TaskID, _ = taskid.FromEntry(queue, band, eid)
		return e
	}
	created := atoi64(f[EntryCreated])
	if e.Born {
		created = entryMs(eid)
	}
	e.Spec = &Spec{Type: typ, Payload: []byte(f[EntryPayload]), MaxAttempts: atoi(f[EntryMaxAttempts]),
		Timeout: time.Duration(atoi64(f[EntryTimeout])) * time.Millisecond, Created: created, IdemHash: f[EntryIdem],
		Schedule: f[EntrySchedule], Tick: atoi64(f[EntryTick]), LimitKey: f[EntryLimitKey], Trace: f[EntryTrace],
		Parent: f[EntryParent], OrderKey: f[EntryOrderKey]}
	if w := f[EntryWorkflow]; w != "" {
		e.Spec.Workflow, e.Spec.Step = w, atoi(f[EntryStep])
		if v, ok := f[EntryPrev]; ok {
			e.Spec.Prev = []byte(v)
		}
	}
	return e
}

// ReadRequest is the input of Read.
type ReadRequest struct {
	Consumer     string
	Credit       int
	ReclaimIdle  time.Duration // > 0 runs a reclaim pass
	Cursors      []string      // the pass's cursor per band (missing or empty: "0-0")
	EnsureGroups bool          // create every band's stream and group first
}

// ReadResult is the output of Read.
type ReadResult struct {
	Paused  bool
	Entries []Entry
	Cursors []string // one per band
}

// Read runs read.lua: claim up to Credit entries, band 9 first, after a
// reclaim pass when ReclaimIdle > 0.
func (q *Queue) Read(ctx context.Context, req ReadRequest) (ReadResult, error) {
	ks := append(q.k.bands([]string{q.k.Info()}), q.k.Run())
	args := make([]string, 0, 5+Bands)
	args = append(args, Group, req.Consumer, itoa(req.Credit), ms(req.ReclaimIdle))
	for b := range Bands {
		cur := "0-0"
		if b < len(req.Cursors) && req.Cursors[b] != "" {
			cur = req.Cursors[b]
		}
		args = append(args, cur)
	}
	if req.EnsureGroups {
		args = append(args, "1")
	} else {
		args = append(args, "0")
	}
	top, err := readScript.Exec(ctx, q.s.r, ks, args).ToArray()
	if err != nil {
		return ReadResult{}, err
	}
	if len(top) != 3 {
		return ReadResult{}, unexpected("read", top)
	}
	var res ReadResult
	paused, _ := top[0].AsInt64()
	res.Paused = paused == 1
	flat, err := top[1].ToArray()
	if err != nil || len(flat)%4 != 0 {
		return ReadResult{}, unexpected("read", top[1])
	}
	for i := 0; i < len(flat); i += 4 {
		band, e1 := flat[i].AsInt64()
		eid, e2 := flat[i+1].ToString()
		rec, e3 := flat[i+2].AsInt64()
		fields, e4 := flat[i+3].AsStrSlice()
		if e1 != nil || e2 != nil || e3 != nil || e4 != nil || band < 0 || band >= Bands || len(fields)%2 != 0 {
			return ReadResult{}, unexpected("read", flat[i:i+4])
		}
		f := make(map[string]string, len(fields)/2)
		for j := 0; j < len(fields); j += 2 {
			f[fields[j]] = fields[j+1]
		}
		e := entryOf(q.name, int(band), eid, f)
		e.Reclaimed = rec == 1
		res.Entries = append(res.Entries, e)
	}
	cursors, err := top[2].AsStrSlice()
	if err != nil || len(cursors) != Bands {
		return ReadResult{}, unexpected("read", top[2])
	}
	res.Cursors = cursors
	return res, nil
}

// ReadPlanned claims up to credit entries for consumer with plain commands,
// highest priority first: it reads the queue's paused flag and what each
// band holds (XLEN) and has delivered (XPENDING), then runs one XREADGROUP
// per band that holds waiting tasks, asking each for what it holds, until
// the credit is used — two round trips. It returns no entries when nothing
// waits. (A band whose group is missing counts as empty: the script path
// recreates it.) With withState it also reads the queue's ReadState just
// after the claims, in their round trip, as ReadBandsState does (unread or
// unreadable, it is empty: StartImplicit starts nothing).
func (q *Queue) ReadPlanned(ctx context.Context, consumer string, credit int, withState bool) (paused bool, entries []Entry, st ReadState, err error) {
	c := q.s.r
	cmds := make(rueidis.Commands, 0, 1+2*Bands)
	cmds = append(cmds, c.B().Hget().Key(q.k.Info()).Field(InfoPaused).Build())
	for p := Bands - 1; p >= 0; p-- {
		cmds = append(cmds, c.B().Xlen().Key(q.k.Band(p)).Build(), c.B().Xpending().Key(q.k.Band(p)).Group(Group).Build())
	}
	res := c.DoMulti(ctx, cmds...)
	if s, err := res[0].ToString(); err == nil && s == "1" {
		return true, nil, st, nil
	} else if err != nil && !rueidis.IsRedisNil(err) {
		return false, nil, st, err
	}
	var reads rueidis.Commands
	var bandOf []int
	left := credit
	for i, p := 1, Bands-1; p >= 0 && left > 0; i, p = i+2, p-1 {
		n, err := res[i].AsInt64()
		if err != nil {
			return false, nil, st, err
		}
		pend, err := pendingCount(res[i+1])
		if err != nil {
			return false, nil, st, err
		}
		waiting := int(n - pend)
		if waiting <= 0 {
			continue
		}
		take := min(left, waiting)
		left -= take
		reads = append(reads, c.B().Xreadgroup().Group(Group, consumer).Count(int64(take)).Streams().Key(q.k.Band(p)).Id(">").Build())
		bandOf = append(bandOf, p)
	}
	if len(reads) == 0 {
		return false, nil, st, nil
	}
	nreads := len(reads)
	if withState {
		reads = append(reads, q.stateCmds()...)
	}
	rs := c.DoMulti(ctx, reads...)
	if withState {
		if st, err = readState(rs[nreads], rs[nreads+1]); err != nil {
			st = ReadState{}
		}
	}
	for i, r := range rs[:nreads] {
		streams, err := r.AsXRead()
		if err != nil && !rueidis.IsRedisNil(err) {
			if isNoGroup(err) {
				continue
			}
			return false, entries, st, err
		}
		for _, e := range streams[q.k.Band(bandOf[i])] {
			entries = append(entries, entryOf(q.name, bandOf[i], e.ID, e.FieldValues))
		}
	}
	return false, entries, st, nil
}

// stateFields are the info fields of a ReadState: paused, g0..g9.
var stateFields = func() []string {
	f := []string{InfoPaused}
	for p := range Bands {
		f = append(f, InfoRegrouped+itoa(p))
	}
	return f
}()

// stateCmds reads a ReadState (readState parses their replies).
func (q *Queue) stateCmds() rueidis.Commands {
	c := q.s.r
	return rueidis.Commands{c.B().Hmget().Key(q.k.Info()).Field(stateFields...).Build(), c.B().Time().Build()}
}

// pendingCount reads the count of an XPENDING summary; a missing group
// counts 0.
func pendingCount(r rueidis.RedisResult) (int64, error) {
	v, err := r.ToArray()
	if err != nil {
		if isNoGroup(err) {
			return 0, nil
		}
		return 0, err
	}
	if len(v) == 0 {
		return 0, nil
	}
	return v[0].AsInt64()
}

// ReadBands claims up to n new entries (per band) with one plain
// XREADGROUP over bands 9 down to low; with block > 0 it waits up to that
// long for the first. missingGroup reports a band without its consumer
// group (Read recreates it).
func (q *Queue) ReadBands(ctx context.Context, consumer string, n int, block time.Duration, low int) (entries []Entry, missingGroup bool, err error) {
	entries, _, missingGroup, err = q.readBands(ctx, consumer, n, block, low, false)
	return entries, missingGroup, err
}

// ReadState is what a plain read learns of its queue in the same round
// trip, just after its claim: enough to start the claimed entries of the
// common case without a script (StartImplicit).
type ReadState struct {
	Paused bool
	// Regrouped holds info's g<p> per band: the last entry id of a band
	// whose consumer group was recreated on entries already there ("" or
	// "0-0" for none); an entry at or before it may be an acknowledged
	// leftover, for start.lua to judge.
	Regrouped [Bands]string
	Now       string // Redis time, Unix ms; "" when unknown (nothing starts)
}

// ReadBandsState is ReadBands that also reads the queue's ReadState.
func (q *Queue) ReadBandsState(ctx context.Context, consumer string, n int, block time.Duration, low int) (entries []Entry, st ReadState, missingGroup bool, err error) {
	return q.readBands(ctx, consumer, n, block, low, true)
}

func (q *Queue) readBands(ctx context.Context, consumer string, n int, block time.Duration, low int, withState bool) (entries []Entry, st ReadState, missingGroup bool, err error) {
	c := q.s.r
	bandKeys := make([]string, 0, Bands)
	ids := make([]string, 0, Bands)
	for p := Bands - 1; p >= low; p-- {
		bandKeys = append(bandKeys, q.k.Band(p))
		ids = append(ids, ">")
	}
	b := c.B().Xreadgroup().Group(Group, consumer).Count(int64(n))
	var cmd rueidis.Completed
	if block > 0 {
		cmd = b.Block(blockMs(block)).Streams().Key(bandKeys...).Id(ids...).Build()
	} else {
		cmd = b.Streams().Key(bandKeys...).Id(ids...).Build()
	}
	var res rueidis.RedisResult
	if withState && block <= 0 {
		// The state is read just after the claim, in its round trip.
		rs := c.DoMulti(ctx, append(rueidis.Commands{cmd}, q.stateCmds()...)...)
		res = rs[0]
		if st, err = readState(rs[1], rs[2]); err != nil {
			return nil, st, false, err
		}
	} else {
		res = c.Do(ctx, cmd)
	}
	streams, err := res.AsXRead()
	if rueidis.IsRedisNil(err) {
		return nil, st, false, nil
	}
	if err != nil {
		if isNoGroup(err) {
			return nil, st, true, nil
		}
		return nil, st, false, err
	}
	for p := Bands - 1; p >= low; p-- {
		for _, e := range streams[q.k.Band(p)] {
			entries = append(entries, entryOf(q.name, p, e.ID, e.FieldValues))
		}
	}
	if withState && block > 0 && len(entries) > 0 {
		// A blocking read goes alone (its connection is closed when ctx
		// ends, which ends the wait); the state follows it.
		// Unread, it is unknown: StartImplicit starts nothing.
		rs := c.DoMulti(context.WithoutCancel(ctx), q.stateCmds()...)
		if st, err = readState(rs[0], rs[1]); err != nil {
			st = ReadState{}
		}
	}
	return entries, st, false, nil
}

// readState parses the replies of HMGET info paused g0..g9 and TIME.
func readState(info, now rueidis.RedisResult) (ReadState, error) {
	var st ReadState
	vs, err := info.ToArray()
	if err != nil {
		return st, err
	}
	if len(vs) != 1+Bands {
		return st, unexpected("info", vs)
	}
	p, _ := vs[0].ToString()
	st.Paused = p == "1"
	for i := range Bands {
		st.Regrouped[i], _ = vs[1+i].ToString()
	}
	t, err := now.AsStrSlice()
	if err != nil || len(t) != 2 {
		return st, unexpected("time", t)
	}
	st.Now = strconv.FormatInt(atoi64(t[0])*1000+atoi64(t[1])/1000, 10)
	return st, nil
}

// StartImplicit starts, without a script, the entries of a plain read of
// the common case — a task born as its entry, claimed for the first time,
// not a workflow's step nor admitted under a group's window, the queue not
// paused, the entry after its band's Regrouped mark — as implicit first
// runs: run 1, attempt 1, no crash, started at the read (st.Now), with no
// Run field. The claim is the start: the pending entry (this consumer's,
// first delivery) fences the run until its first renewal or progress
// report writes its Run field (renew.lua, progress.lua); finish.lua,
// cancel.lua and start.lua's reclaim know it (first_runs). It returns one
// Started per entry: Began for those, Unstarted for the rest (for Start).
func StartImplicit(entries []Entry, st ReadState) []Started {
	out := make([]Started, len(entries))
	for i := range entries {
		e := &entries[i]
		mark := st.Regrouped[e.Band]
		if !e.Born || e.Malformed || e.GiveBack || e.Reclaimed || e.Group != "" || e.Spec == nil || e.Spec.Workflow != "" ||
			len(e.Scopes) > 0 || st.Paused || st.Now == "" || (mark != "" && mark != "0-0" && !idAfter(e.EntryID, mark)) {
			out[i].Code = Unstarted
			continue
		}
		out[i] = Started{Code: Began, Run: 1, Attempt: 1, Started: st.Now}
	}
	return out
}

// Take claims up to n new entries for cfg.Worker with one XREADGROUP over
// bands 9 down to low and starts those of the common case in the same call
// (take.lua): a busy reader's claim and start in one round trip. Entries
// beyond n come back with GiveBack set; those Take did not start have
// code Unstarted, for Start. missingGroup reports a band without its
// consumer group (Read recreates it). Durability is as for Start.
func (q *Queue) Take(ctx context.Context, cfg StartConfig, n, low int) (entries []Entry, started []Started, missingGroup bool, err error) {
	ks := q.k.bands([]string{q.k.Info(), q.k.Run()})
	args := []string{Group, cfg.Worker, itoa(n), itoa(low)}
	if cfg.Types != nil {
		args = append(append(args, "types"), cfg.Types...)
	}
	res, err := takeScript.ExecDurable(ctx, q.s.r, cfg.Durability, ks, args)
	var nre *NotReplicatedError
	if err != nil && !errors.As(err, &nre) {
		return nil, nil, false, err
	}
	replErr := err
	top, err := res.ToArray()
	if err != nil {
		return nil, nil, false, err
	}
	if len(top) != 3 {
		return nil, nil, false, unexpected("take", top)
	}
	if status, _ := top[0].AsInt64(); status == -1 {
		return nil, nil, true, nil
	}
	now, _ := top[1].ToString()
	flat, err := top[2].ToArray()
	if err != nil || len(flat)%4 != 0 {
		return nil, nil, false, unexpected("take", top[2])
	}
	entries = make([]Entry, 0, len(flat)/4)
	started = make([]Started, 0, len(flat)/4)
	for i := 0; i < len(flat); i += 4 {
		band, e1 := flat[i].AsInt64()
		eid, e2 := flat[i+1].ToString()
		code, e3 := flat[i+2].AsInt64()
		fields, e4 := flat[i+3].AsStrSlice()
		if e1 != nil || e2 != nil || e3 != nil || e4 != nil || band < 0 || band >= Bands || len(fields)%2 != 0 {
			return nil, nil, false, unexpected("take", flat[i:i+4])
		}
		f := make(map[string]string, len(fields)/2)
		for j := 0; j < len(fields); j += 2 {
			f[fields[j]] = fields[j+1]
		}
		e := entryOf(q.name, int(band), eid, f)
		s := Started{Code: Unstarted}
		switch code {
		case 1:
			s = Started{Code: Began, Run: 1, Attempt: 1, Started: now}
		case 2:
			e.GiveBack = true
		}
		entries = append(entries, e)
		started = append(started, s)
	}
	return entries, started, false, replErr
}

func isNoGroup(err error) bool { return delivery.IsNoGroup(err) }

// blockMs is the BLOCK argument for a wait of d: whole milliseconds,
// rounded up, and at least 1 — BLOCK 0 waits forever, which a wait of
// under a millisecond (what is left of a lease poll's) must not become.
func blockMs(d time.Duration) int64 { return int64(max((d+time.Millisecond-1)/time.Millisecond, 1)) }

// WaitWakeup blocks until the queue's wakeup stream moves (a resume, a new
// earlier due time) or for up to block.
func (q *Queue) WaitWakeup(ctx context.Context, after string, block time.Duration) error {
	c := q.s.r
	err := c.Do(ctx, c.B().Xread().Count(1).Block(blockMs(block)).Streams().Key(q.k.Wakeup()).Id(after).Build()).Error()
	if rueidis.IsRedisNil(err) {
		return nil
	}
	return err
}

// StartConfig is the per-worker input of Start.
type StartConfig struct {
	Worker     string
	MaxCrashes int
	Retention  time.Duration // of a task that ends here
	Durability Durability
	// LeaseTTL is the lifetime of the leases of scoped limits a start
	// takes (the visibility timeout: they are renewed with the task).
	LeaseTTL time.Duration
	// Types are the task types the worker runs (nil: every type; empty:
	// none): Take leaves entries of other types unstarted, for the caller
	// to give back.
	Types []string
}

// StartCode is the outcome of starting one entry.
type StartCode int

// Outcomes of Start.
const (
	Skipped StartCode = 0
	Began   StartCode = 1  // RUNNING under Run
	Died    StartCode = -1 // past MaxCrashes, or malformed: DEAD (its event was published)
	// Withdrawn: taken over from a lost worker after its cancellation was
	// requested: CANCELLED, not started (its event was published).
	Withdrawn StartCode = -2
	// Unstarted: Take claimed the entry and left its start to Start.
	Unstarted StartCode = 2
	// Parked: a full scoped concurrency limit holds the task back, QUEUED
	// in ScopeWait until one of the scope's leases is released.
	Parked StartCode = 3
	// Deferred: a scoped rate limit (its start reserved) or pause makes it
	// SCHEDULED until then.
	Deferred StartCode = 4
)

// Started is the outcome of starting one entry. When Began, Run, Attempt,
// Crashes and Started describe the run.
type Started struct {
	Code    StartCode
	Run     int
	Attempt int
	Crashes int
	Started string // Unix ms, as Redis recorded it
	// OnFull is the rule of a full scoped concurrency limit (ScopeDef.OnFull)
	// that acted at this start, "" for none: OnFullCancelNewest ended the
	// task CANCELLED here (Code Withdrawn); OnFullCancelRunning requested
	// the cancellation of the oldest run under the limit (the task is
	// Parked); OnFullReplaceWaiting cancelled Replaced (the task is Parked).
	OnFull string
	// Replaced are the tasks that waited for the limit before this one and
	// that its OnFullReplaceWaiting rule cancelled (a task two starts of a
	// batch replaced is listed at the first).
	Replaced []Replaced
}

// Replaced is a task a full limit's OnFullReplaceWaiting rule cancelled.
type Replaced struct{ ID, Type string }

// Start runs start.lua for entries of this queue. With cfg.Durability it
// then waits for the replicas on the same connection: an unanswered WAIT
// is an error (run nothing); too few replicas in time returns the results
// together with a *NotReplicatedError (the starts stand).
func (q *Queue) Start(ctx context.Context, cfg StartConfig, entries []Entry) ([]Started, error) {
	ks := make([]string, 0, 24+len(entries))
	ks = append(ks, q.k.Info(), q.k.DLQ(), q.k.Done(), q.k.Run(), q.k.Finished(), q.k.GroupWait(), q.k.GroupCount(),
		q.k.Limits(), q.k.ScopeUse(), q.k.ScopeLeases(), q.k.ScopeWait(), q.k.Schedule(), q.k.Wakeup(), q.k.ScopeLimits())
	ks = q.k.bands(ks)
	args := make([]string, 0, 8+3*len(entries))
	args = append(args, Group, cfg.Worker, itoa(cfg.MaxCrashes), q.k.Events(), ms(cfg.Retention), q.name, ms(cfg.LeaseTTL),
		itoa(len(entries)))
	var wfKeys []string
	for _, e := range entries {
		_, ulid, err := taskid.Parse(e.TaskID)
		if err != nil {
			ulid = invalidULID // no such task: the entry is acknowledged and skipped
		}
		ks = append(ks, q.k.Task(ulid))
		how := "h0"
		switch {
		case e.Born:
			how = "b0"
		case e.Light:
			how = "o0"
		case e.Group != "":
			how = "g0"
		}
		switch {
		case e.Malformed:
			how = how[:1] + "3"
		case e.GiveBack && e.Reclaimed:
			how = how[:1] + "6"
		case e.GiveBack:
			how = how[:1] + "2"
		case e.Resumed && e.Reclaimed:
			how = how[:1] + "5"
		case e.Resumed:
			how = how[:1] + "4"
		case e.Reclaimed:
			how = how[:1] + "1"
		}
		if e.Spec != nil && e.Spec.Workflow != "" {
			// after every task hash: KEYS[24+len(entries)+j]
			wfKeys = append(wfKeys, q.k.Workflow(e.Spec.Workflow))
			how += "w" + itoa(24+len(entries)+len(wfKeys))
		}
		for _, s := range e.Scopes {
			how += "\n" + s
		}
		args = append(args, itoa(e.Band), e.EntryID, how)
	}
	ks = append(ks, wfKeys...)
	ks = append(ks, q.k.OrderHold(), q.k.OrderLine(), q.k.OrderIndex())
	args = append(args, q.k.Cancels())
	res, err := startScript.ExecDurable(ctx, q.s.r, cfg.Durability, ks, args)
	var nre *NotReplicatedError
	if err != nil && !errors.As(err, &nre) {
		return nil, err
	}
	// A start the replicas may lack must not run: a failover to one of them
	// would deliver the task again under the same run number. Unknown (the
	// connection failed): the starts stay claimed and are reclaimed after
	// the visibility timeout. Too few replicas in time (the master is
	// alive): the starts stand, reported with the results.
	replErr := err
	flat, err := res.ToArray()
	if err != nil {
		return nil, err
	}
	if len(flat) < 4*len(entries)+1 {
		return nil, unexpected("start", flat)
	}
	started, _ := flat[4*len(entries)].ToString()
	out := make([]Started, len(entries))
	for i := range entries {
		code, err := flat[4*i].AsInt64()
		if err != nil {
			return nil, unexpected("start", flat[4*i])
		}
		s := &out[i]
		s.Code = StartCode(code)
		if s.Code != Began {
			continue
		}
		s.Run, s.Attempt, s.Crashes = msgInt(flat[4*i+1]), msgInt(flat[4*i+2]), msgInt(flat[4*i+3])
		s.Started = started
	}
	if tail := flat[4*len(entries)+1:]; len(tail) > 0 {
		// The starts gave their groups room: their next waiters move in
		// (should this fail, the scheduler's SweepGroups does it). Then what
		// the rules of full limits did (q.ruled).
		vs := make([]string, len(tail))
		for i, w := range tail {
			vs[i], _ = w.ToString()
		}
		ms, rules := splitRuled(vs)
		if len(ms) > 0 {
			_, _ = q.promoteWaiters(ctx, ms)
		}
		q.ruled(context.WithoutCancel(ctx), cfg.Retention, rules, out)
	}
	return out, replErr
}

func msgInt(m rueidis.RedisMessage) int {
	if n, err := m.AsInt64(); err == nil {
		return int(n)
	}
	s, _ := m.ToString()
	n, _ := strconv.Atoi(s)
	return n
}

// Entry reads band entry eid of this queue (one XRANGE): what a lease's
// completion needs of the task it ran. Nil when the entry is gone.
func (q *Queue) Entry(ctx context.Context, band int, eid string) (*Entry, error) {
	c := q.s.r
	xs, err := c.Do(ctx, c.B().Xrange().Key(q.k.Band(band)).Start(eid).End(eid).Build()).AsXRange()
	if err != nil {
		return nil, err
	}
	if len(xs) != 1 {
		return nil, nil
	}
	e := entryOf(q.name, band, eid, xs[0].FieldValues)
	return &e, nil
}

// EntryAt names an entry of a band.
type EntryAt struct {
	Band int
	ID   string
}

// Entries reads the entries at, as Entry does, in one round trip: nil
// where one is gone.
func (q *Queue) Entries(ctx context.Context, at []EntryAt) ([]*Entry, error) {
	c := q.s.r
	reads := make(rueidis.Commands, len(at))
	for i, a := range at {
		reads[i] = c.B().Xrange().Key(q.k.Band(a.Band)).Start(a.ID).End(a.ID).Build()
	}
	out := make([]*Entry, len(at))
	for i, r := range c.DoMulti(ctx, reads...) {
		xs, err := r.AsXRange()
		if err != nil {
			return nil, err
		}
		if len(xs) == 1 {
			e := entryOf(q.name, at[i].Band, at[i].ID, xs[0].FieldValues)
			out[i] = &e
		}
	}
	return out, nil
}
