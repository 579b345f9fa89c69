package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/api/wire"
)

func TestOneLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"plain", 0, "plain"},
		{"  two\n\nlines\t and\r\ntabs ", 0, "two lines and tabs"},
		// A terminal escape from a task's error or type cannot reach the
		// terminal.
		{"red \x1b[31mtext\x1b[0m", 0, "red \uFFFD[31mtext\uFFFD[0m"},
		{"bell\x07 nul\x00 del\x7f c1\u0085x", 0, "bell\uFFFD nul\uFFFD del\uFFFD c1 x"},
		{"bidi \u202eevil", 0, "bidi \uFFFDevil"},
		{"bad \xff byte", 0, "bad \uFFFD byte"},
		{"abcdef", 3, "abc…"},
		{"abc", 3, "abc"},
		{"ééééé", 2, "éé…"},
	} {
		if got := oneLine(tc.in, tc.max); got != tc.want {
			t.Errorf("oneLine(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

func TestTableAndFields(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	tb := newTable(&b, "ID", "TYPE")
	tb.row("a", "x\ty") // a tab in a cell must not add a column
	tb.row("longer-id", "z")
	if err := tb.flush(); err != nil {
		t.Fatal(err)
	}
	want := "ID         TYPE\na          x y\nlonger-id  z\n"
	if b.String() != want {
		t.Errorf("table:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	if err := fields(&b, "id", "1", "empty", "", "long name", "v\nw"); err != nil {
		t.Fatal(err)
	}
	if want := "id:         1\nlong name:  v w\n"; b.String() != want {
		t.Errorf("fields:\n%q\nwant\n%q", b.String(), want)
	}
}

func TestFormatters(t *testing.T) {
	t.Parallel()
	if got := compact(json.RawMessage("{\n  \"a\": [1, 2],\n  \"h\": \"<b>\"\n}")); got != `{"a":[1,2],"h":"<b>"}` {
		t.Errorf("compact: %q", got)
	}
	for _, raw := range []string{"", "null"} {
		if got := compact(json.RawMessage(raw)); got != "" {
			t.Errorf("compact(%q) = %q, want empty", raw, got)
		}
	}
	if got := fmtSeconds(90); got != "1m30s" {
		t.Errorf("fmtSeconds(90) = %q", got)
	}
	if got := fmtSeconds(0); got != "" {
		t.Errorf("fmtSeconds(0) = %q", got)
	}
	at := time.Date(2025, 1, 2, 3, 4, 5, 6e8, time.FixedZone("x", 3600))
	if got := fmtTime(wire.Time(at)); got != "2025-01-02T02:04:05Z" {
		t.Errorf("fmtTime: %q", got)
	}
	if fmtTime(wire.Time{}) != "-" || fmtTimePtr(nil) != "" {
		t.Error("fmtTime of no time")
	}
	if dash("") != "-" || dash("a") != "a" {
		t.Error("dash")
	}
}

// TestPrintJSON: --json output is one indented document with a final
// newline.
func TestPrintJSON(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := printJSON(&b, []byte(`{"a":{"b":1}}`+"\n")); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"a\": {\n    \"b\": 1\n  }\n}\n"; b.String() != want {
		t.Errorf("printJSON: %q, want %q", b.String(), want)
	}
	if !strings.HasSuffix(b.String(), "}\n") {
		t.Error("no final newline")
	}
}
