package taskscript

import (
	"context"
	"strconv"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/redis/rueidis"
)

// ReadRequest is the input of Read.
type ReadRequest struct {
	Group, Consumer string
	Credit          int
	ReclaimIdle     time.Duration // > 0 runs a reclaim pass
	Cursors         [keys.Bands]string
	EnsureGroups    bool // create every band's stream and group first
}

// Entry is one claimed band entry.
type Entry struct {
	Band      int
	EntryID   string
	TaskID    string
	Reclaimed bool  // taken over from a worker that stopped renewing it
	GiveBack  bool  // for Start: put the entry back unstarted
	Spec      *Spec // the task's fields carried by the entry; nil if not read
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
}

// entryOf reads a band entry; ok is false when it is not a task entry.
func entryOf(band int, e rueidis.XRangeEntry) (Entry, bool) {
	f := e.FieldValues
	id, ok := f["i"]
	if !ok {
		return Entry{}, false
	}
	entry := Entry{Band: band, EntryID: e.ID, TaskID: id}
	if t, ok := f["t"]; ok {
		maxAtt, _ := strconv.Atoi(f["m"])
		timeout, _ := strconv.ParseInt(f["o"], 10, 64)
		created, _ := strconv.ParseInt(f["c"], 10, 64)
		entry.Spec = &Spec{Type: t, Payload: []byte(f["p"]), MaxAttempts: maxAtt,
			Timeout: time.Duration(timeout) * time.Millisecond, Created: created, IdemHash: f["k"]}
	}
	return entry, true
}

// ReadResult is the output of Read.
type ReadResult struct {
	Paused  bool
	Entries []Entry
	Cursors [keys.Bands]string
}

// Read runs read.lua: claim up to Credit entries, band 9 first.
func Read(ctx context.Context, c rueidis.Client, k keys.Tasks, req ReadRequest) (ReadResult, error) {
	ks := bands([]string{k.Info()}, k)
	args := make([]string, 0, 5+keys.Bands)
	args = append(args, req.Group, req.Consumer, itoa(req.Credit), ms(req.ReclaimIdle))
	for _, cur := range req.Cursors {
		if cur == "" {
			cur = "0-0"
		}
		args = append(args, cur)
	}
	if req.EnsureGroups {
		args = append(args, "1")
	} else {
		args = append(args, "0")
	}
	top, err := readScript.Exec(ctx, c, ks, args).ToArray()
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
		tid, e3 := flat[i+2].ToString()
		rec, e4 := flat[i+3].AsInt64()
		if e1 != nil || e2 != nil || e3 != nil || e4 != nil || band < 0 || band >= keys.Bands {
			return ReadResult{}, unexpected("read", flat[i:i+4])
		}
		res.Entries = append(res.Entries, Entry{Band: int(band), EntryID: eid, TaskID: tid, Reclaimed: rec == 1})
	}
	cursors, err := top[2].AsStrSlice()
	if err != nil || len(cursors) != keys.Bands {
		return ReadResult{}, unexpected("read", top[2])
	}
	copy(res.Cursors[:], cursors)
	return res, nil
}

// ParseBlockingRead turns the reply of a blocking XREADGROUP over the band
// streams into entries (new deliveries). Entries that are not task entries
// are returned in bad, for the caller to drop.
func ParseBlockingRead(k keys.Tasks, streams map[string][]rueidis.XRangeEntry) (entries []Entry, bad []Entry) {
	for p := keys.Bands - 1; p >= 0; p-- {
		for _, e := range streams[k.Band(p)] {
			entry, ok := entryOf(p, e)
			if !ok {
				bad = append(bad, Entry{Band: p, EntryID: e.ID})
				continue
			}
			entries = append(entries, entry)
		}
	}
	return entries, bad
}

// BandKeys returns the band streams from priority 9 down to 0, the order a
// blocking read lists them in.
func BandKeys(k keys.Tasks) []string {
	out := make([]string, 0, keys.Bands)
	for p := keys.Bands - 1; p >= 0; p-- {
		out = append(out, k.Band(p))
	}
	return out
}
