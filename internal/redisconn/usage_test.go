package redisconn_test

import (
	"strings"
	"testing"

	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// TestReadUsageCountsEachPrimaryOnce writes 4 MiB and reads the usage
// before and after: on one server and on a Cluster with replicas, where
// only the 3 primaries count (a replica's copy would count the data twice).
func TestReadUsageCountsEachPrimaryOnce(t *testing.T) {
	t.Parallel()
	const size = 4 << 20
	for _, tc := range []struct {
		name      string
		url       func(t *testing.T) string
		primaries int
	}{
		{"standalone", func(t *testing.T) string { return "redis://" + redistest.Start(t, nil).Addr }, 1},
		{"cluster", func(t *testing.T) string { return redistest.StartCluster(t, 3, 1).URL() }, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := connectCtx(t)
			c, err := redisconn.Connect(ctx, tc.url(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			before, err := redisconn.ReadUsage(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			value := strings.Repeat("x", size)
			if err := c.Do(ctx, c.B().Set().Key("usage").Value(value).Build()).Error(); err != nil {
				t.Fatal(err)
			}
			after, err := redisconn.ReadUsage(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			d := after.Sub(before)
			if d.Primaries != tc.primaries {
				t.Errorf("primaries = %d, want %d", d.Primaries, tc.primaries)
			}
			// A primary's memory also holds the replication buffer, so
			// only the lower bound is exact.
			if d.Memory < size {
				t.Errorf("memory grew %d bytes for a %d-byte value", d.Memory, size)
			}
			if d.Commands < 1 {
				t.Errorf("commands grew %d, want the SET counted", d.Commands)
			}
			if d.CPU < 0 || after.CPU <= 0 {
				t.Errorf("CPU before %v after %v, want a positive, growing total", before.CPU, after.CPU)
			}
		})
	}
}
