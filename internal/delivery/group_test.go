package delivery_test

import (
	"os"
	"testing"

	"github.com/dtq-dev/dtq/internal/delivery"
	"github.com/dtq-dev/dtq/internal/redistest"
)

func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }

// The group library, run as the scripts run it (prepended), on real Redis
// and the embedded backend: nogroup tells a missing group from other
// errors, and ensure_group creates a missing group (and stream) at id 0
// once, then reports that it exists.
func TestGroupLib(t *testing.T) {
	t.Parallel()
	probe := delivery.GroupLib() + `
local stream, other = KEYS[1], KEYS[2]
local out = {}
local function flag(b) if b then return 1 end return 0 end
out[#out + 1] = flag(nogroup(redis.pcall('XREADGROUP', 'GROUP', 'g', 'c', 'COUNT', 1, 'STREAMS', stream, '>')))
out[#out + 1] = flag(ensure_group(stream, 'g'))
out[#out + 1] = flag(ensure_group(stream, 'g'))
out[#out + 1] = redis.call('XLEN', stream)
out[#out + 1] = flag(nogroup(redis.pcall('XREADGROUP', 'GROUP', 'g', 'c', 'COUNT', 1, 'STREAMS', stream, '>')))
redis.call('SET', other, 'not a stream')
out[#out + 1] = flag(nogroup(redis.pcall('XREADGROUP', 'GROUP', 'g', 'c', 'COUNT', 1, 'STREAMS', other, '>')))
out[#out + 1] = flag(ensure_group(other, 'g'))
redis.call('XADD', stream, '*', 'f', 'v')
redis.call('XGROUP', 'DESTROY', stream, 'g')
out[#out + 1] = flag(nogroup(redis.pcall('XAUTOCLAIM', stream, 'g', 'c', 0, '0-0')))
out[#out + 1] = flag(ensure_group(stream, 'g'))
local r = redis.call('XREADGROUP', 'GROUP', 'g', 'c', 'COUNT', 10, 'STREAMS', stream, '>')
out[#out + 1] = #r[1][2]
return out
`
	want := []int64{
		1, // XREADGROUP, no stream: NOGROUP
		1, // ensure_group created it
		0, // and reports it exists the second time
		0, // MKSTREAM made an empty stream
		0, // no NOGROUP now (an empty read)
		0, // WRONGTYPE is not NOGROUP
		0, // nor does ensure_group make a group on it
		1, // XAUTOCLAIM after XGROUP DESTROY: NOGROUP
		1, // recreated
		1, // at id 0: the entry already in the stream is delivered again
	}
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		keys := []string{b.Namespace + ":{q}:s", b.Namespace + ":{q}:x"}
		args := append([]string{"EVAL", probe, "2"}, keys...)
		got, err := redistest.Do(t.Context(), b.Client, args...).AsIntSlice()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("step %d: got %d, want %d (all: %v)", i+1, got[i], want[i], got)
			}
		}
	})
}
