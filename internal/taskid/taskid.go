// Package taskid makes and parses task ids: "<queue>-<ULID>". The queue part
// lets a task be found from its id alone (its keys live under the queue's
// hash tag); the ULID part is 26 Crockford base32 characters, a millisecond
// timestamp and 80 more bits, so ids sort by creation time.
//
// The 80 bits are of one of two kinds, told apart by their first bit:
//
//   - 0: random (New): a task created with a record of its own (a delayed
//     task, born SCHEDULED);
//   - 1: the location of the task's birth entry in its queue's priority
//     band (FromEntry): 4 bits of band, then the entry id's sequence number
//     in 65 bits (the entry id's milliseconds are the ULID's timestamp).
//     Such a task needs nothing in Redis but that entry while it waits:
//     Entry turns its id back into the entry's location.
package taskid

import (
	"crypto/rand"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
)

const ulidLen = 26

const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// ErrInvalid is returned by Parse for a string that is not a task id.
var ErrInvalid = errors.New("taskid: not a task id")

// New returns a new task id in queue (which must be a valid name).
func New(queue string, now time.Time) string {
	var b [ulidLen + 1 + 64]byte
	out := append(b[:0], queue...)
	out = append(out, '-')
	return string(appendULID(out, now))
}

func appendULID(dst []byte, now time.Time) []byte {
	ms := uint64(now.UnixMilli())
	var r [10]byte
	rand.Read(r[:])
	r[0] &= 0x7f // first bit 0: a random id
	// 48 bits of time: 10 characters; 80 random bits: 16 characters.
	for i := 9; i >= 0; i-- {
		dst = append(dst, 0)
	}
	n := len(dst)
	for i := 1; i <= 10; i++ {
		dst[n-i] = alphabet[ms&31]
		ms >>= 5
	}
	var acc uint64
	bits := 0
	for _, c := range r {
		acc = acc<<8 | uint64(c)
		bits += 8
		for bits >= 5 {
			bits -= 5
			dst = append(dst, alphabet[(acc>>bits)&31])
		}
	}
	return dst
}

// Parse splits id into its queue and ULID parts.
func Parse(id string) (queue, ulid string, err error) {
	if len(id) < ulidLen+2 || id[len(id)-ulidLen-1] != '-' {
		return "", "", ErrInvalid
	}
	queue, ulid = id[:len(id)-ulidLen-1], id[len(id)-ulidLen:]
	if !keys.ValidName(queue) {
		return "", "", ErrInvalid
	}
	for i := 0; i < len(ulid); i++ {
		if !isBase32(ulid[i]) {
			return "", "", ErrInvalid
		}
	}
	return queue, ulid, nil
}

func isBase32(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z' && c != 'I' && c != 'L' && c != 'O' && c != 'U')
}

// seqChars holds an entry id's sequence number in a derived ULID: 13
// characters (65 bits), after the one holding the flag and the band.
const seqChars = 13

// FromEntry returns the id of the task born as entry entryID ("<ms>-<seq>")
// of band (0-9) in queue (a valid name).
func FromEntry(queue string, band int, entryID string) (string, error) {
	ms, seq, ok := splitEntryID(entryID)
	if !ok || band < 0 || band > 15 || ms >= 1<<48 {
		return "", ErrInvalid
	}
	var b [ulidLen + 1 + 64]byte
	out := append(b[:0], queue...)
	out = append(out, '-')
	n := len(out)
	out = append(out, make([]byte, ulidLen)...)
	for i := 9; i >= 0; i-- {
		out[n+i] = alphabet[ms&31]
		ms >>= 5
	}
	out[n+10] = alphabet[16|band]
	for i := seqChars; i >= 1; i-- {
		out[n+10+i] = alphabet[seq&31]
		seq >>= 5
	}
	out[n+24], out[n+25] = '0', '0'
	return string(out), nil
}

// Entry returns the location of the birth entry of the task whose ULID part
// is ulid, when the id was made by FromEntry; ok is false for a random id.
func Entry(ulid string) (band int, entryID string, ok bool) {
	if len(ulid) != ulidLen {
		return 0, "", false
	}
	flag := decode(ulid[10])
	if flag < 16 {
		return 0, "", false
	}
	var ms, seq uint64
	for i := 0; i < 10; i++ {
		ms = ms<<5 | uint64(decode(ulid[i]))
	}
	for i := 11; i <= 10+seqChars; i++ {
		seq = seq<<5 | uint64(decode(ulid[i]))
	}
	return flag & 15, strconv.FormatUint(ms, 10) + "-" + strconv.FormatUint(seq, 10), true
}

func decode(c byte) int {
	return strings.IndexByte(alphabet, c)
}

func splitEntryID(id string) (ms, seq uint64, ok bool) {
	a, b, found := strings.Cut(id, "-")
	if !found {
		return 0, 0, false
	}
	ms, err1 := strconv.ParseUint(a, 10, 64)
	seq, err2 := strconv.ParseUint(b, 10, 64)
	return ms, seq, err1 == nil && err2 == nil
}
