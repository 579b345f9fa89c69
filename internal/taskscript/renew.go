package taskscript

import (
	"context"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/redis/rueidis"
)

// RenewItem is one running execution to renew.
type RenewItem struct {
	ULID    string
	Band    int
	EntryID string
	Run     int
}

// RenewStatus is the outcome of renewing one execution.
type RenewStatus int

// Outcomes of Renew.
const (
	Lost      RenewStatus = 0 // not RUNNING under this run any more
	Renewed   RenewStatus = 1
	Cancelled RenewStatus = 2 // renewed, and its cancellation was requested
)

// Renew runs renew.lua for items of one queue in one round trip.
func Renew(ctx context.Context, c rueidis.Client, k keys.Tasks, group, consumer string, items []RenewItem) ([]RenewStatus, error) {
	ks := bands(make([]string, 0, 10+len(items)), k)
	args := make([]string, 0, 3+3*len(items))
	args = append(args, group, consumer, itoa(len(items)))
	for _, it := range items {
		ks = append(ks, k.Task(it.ULID))
		args = append(args, itoa(it.Band), it.EntryID, itoa(it.Run))
	}
	replies, err := renewScript.Exec(ctx, c, ks, args).ToArray()
	if err != nil {
		return nil, err
	}
	if len(replies) != len(items) {
		return nil, unexpected("renew", replies)
	}
	out := make([]RenewStatus, len(items))
	for i, r := range replies {
		n, err := r.AsInt64()
		if err != nil {
			return nil, unexpected("renew", r)
		}
		out[i] = RenewStatus(n)
	}
	return out, nil
}
