package queuestore

import (
	"context"
	"slices"

	"github.com/redis/rueidis"
)

// Register adds topic to the set topics and queue to the set queues (a
// namespace-wide key, in another slot), in one round trip.
func Register(ctx context.Context, c rueidis.Client, queues, queue, topics, topic string) error {
	for _, r := range c.DoMulti(ctx, c.B().Sadd().Key(topics).Member(topic).Build(), c.B().Sadd().Key(queues).Member(queue).Build()) {
		if err := r.Error(); err != nil {
			return err
		}
	}
	return nil
}

// Members returns the members of set key, sorted.
func Members(ctx context.Context, c rueidis.Client, key string) ([]string, error) {
	v, err := c.Do(ctx, c.B().Smembers().Key(key).Build()).AsStrSlice()
	if err != nil {
		return nil, err
	}
	slices.Sort(v)
	return v, nil
}
