package queue

import (
	"strconv"
	"strings"
)

// streamID is a parsed Redis stream entry id, "<ms>-<seq>".
type streamID struct{ ms, seq uint64 }

func parseID(s string) (streamID, bool) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return streamID{}, false
	}
	ms, err1 := strconv.ParseUint(a, 10, 64)
	seq, err2 := strconv.ParseUint(b, 10, 64)
	return streamID{ms, seq}, err1 == nil && err2 == nil
}

func (a streamID) less(b streamID) bool {
	return a.ms < b.ms || (a.ms == b.ms && a.seq < b.seq)
}
