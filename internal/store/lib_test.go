package store

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// libBlocks loses no line of lib.lua's code, and each block is one
// definition: every line of code is in exactly one block.
func TestLibBlocksCoverLib(t *testing.T) {
	t.Parallel()
	var code []string
	for _, l := range strings.Split(libSource, "\n") {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "--") {
			code = append(code, l)
		}
	}
	var got []string
	for _, b := range libIndex {
		for _, l := range strings.Split(b.text, "\n") {
			if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "--") {
				got = append(got, l)
			}
		}
	}
	if strings.Join(got, "\n") != strings.Join(code, "\n") {
		t.Fatalf("lib.lua's %d lines of code became %d in %d blocks", len(code), len(got), len(libIndex))
	}
	if len(libIndex) < 30 {
		t.Fatalf("only %d definitions found in lib.lua", len(libIndex))
	}
}

// libFor keeps what a script names and what that names, and nothing else.
func TestLibForKeepsWhatIsNamed(t *testing.T) {
	t.Parallel()
	lib := libFor("admit(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], KEYS[3], KEYS[4])")
	for _, want := range []string{"local function admit(", "local function readd(", "local function group_window(", "local GROUP_WINDOW ="} {
		if !strings.Contains(lib, want) {
			t.Errorf("libFor(admit) lacks %q", want)
		}
	}
	for _, not := range []string{"born_ulid", "trim_band", "scope_take"} {
		if strings.Contains(lib, not) {
			t.Errorf("libFor(admit) has %s", not)
		}
	}
	if got := libFor("return 1"); strings.Contains(got, "local") {
		t.Errorf("libFor of a script naming nothing: %q", got)
	}
}

// id_le orders stream ids as numbers, without parsing them: across
// lengths of either part, equal ids, and the zero id.
func TestIDLe(t *testing.T) {
	t.Parallel()
	ids := []string{"0-0", "0-1", "1-0", "9-9", "10-0", "10-1", "10-10", "99-2", "100-0",
		"1796391831682-0", "1796391831682-1", "1796391831682-10", "1796391831683-0", "1796391831699-9", "17963918316820-0"}
	num := func(s string) (ms, seq int64) {
		a, b, _ := strings.Cut(s, "-")
		ms, _ = strconv.ParseInt(a, 10, 64)
		seq, _ = strconv.ParseInt(b, 10, 64)
		return
	}
	var args []string
	var want []int64
	for _, a := range ids {
		for _, b := range ids {
			args = append(args, a, b)
			am, as := num(a)
			bm, bs := num(b)
			w := int64(0)
			if am < bm || (am == bm && as <= bs) {
				w = 1
			}
			want = append(want, w)
		}
	}
	src := libFor("id_le") + "local out = {}\nfor i = 1, #ARGV, 2 do if id_le(ARGV[i], ARGV[i + 1]) then out[#out + 1] = 1 else out[#out + 1] = 0 end end\nreturn out\n"
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		got, err := b.Client.Do(context.Background(), b.Client.B().Eval().Script(src).Numkeys(0).Arg(args...).Build()).AsIntSlice()
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("id_le(%s, %s) = %d, want %d", args[2*i], args[2*i+1], got[i], want[i])
			}
		}
	})
}
