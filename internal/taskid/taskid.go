// Package taskid makes and parses task ids: "<queue>-<ULID>". The queue part
// lets a task be found from its id alone (its keys live under the queue's
// hash tag); the ULID part is 26 Crockford base32 characters, a millisecond
// timestamp and 80 random bits, so ids sort by creation time.
package taskid

import (
	"crypto/rand"
	"errors"
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
