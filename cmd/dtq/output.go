package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/spf13/cobra"
)

// clientRun runs fn with an API client built from o. fn makes the request
// and decodes its answer for human, which prints it; with --json the
// answer is printed as it came (indented) instead.
func clientRun(cmd *cobra.Command, o *apiOptions, out io.Writer, fn func(c *apiClient) (*answer, error), human func() error) error {
	c, err := o.client(cmd)
	if err != nil {
		return err
	}
	ans, err := fn(c)
	if err != nil {
		return err
	}
	if o.json {
		return printJSON(out, ans.raw)
	}
	return human()
}

// pathID escapes a task id or queue name for a URL path, refusing an empty
// one (which would name another route). "." and ".." are escaped so that
// they reach the route they are meant for, whose rule refuses them (they
// are not names): unescaped, they would name another route.
func pathID(what, s string) (string, error) {
	if s == "" {
		return "", fmt.Errorf("the %s must not be empty", what)
	}
	if s == "." || s == ".." { // a path segment the server would clean away
		return strings.ReplaceAll(s, ".", "%2E"), nil
	}
	return url.PathEscape(s), nil
}

// table writes aligned columns to out.
type table struct {
	out io.Writer
	tw  *tabwriter.Writer
}

func newTable(out io.Writer, header ...string) *table {
	t := &table{out: out, tw: tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)}
	t.row(header...)
	return t
}

// row adds a line; every cell is made one printable line first.
func (t *table) row(cells ...string) {
	for i, c := range cells {
		if i > 0 {
			io.WriteString(t.tw, "\t")
		}
		io.WriteString(t.tw, oneLine(c, 0))
	}
	io.WriteString(t.tw, "\n")
}

func (t *table) flush() error { return t.tw.Flush() }

// fields writes "name:  value" lines, aligned; empty values are skipped.
func fields(out io.Writer, kv ...string) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		fmt.Fprintf(tw, "%s:\t%s\n", kv[i], oneLine(kv[i+1], 0))
	}
	return tw.Flush()
}

// oneLine makes s safe to print as one line of a table: control characters
// (newlines, tabs, terminal escapes) become spaces or U+FFFD, runs of space
// shrink to one, and with max > 0 it is cut to max runes with "…".
func oneLine(s string, max int) string {
	var b strings.Builder
	n := 0
	space := false
	for _, r := range strings.TrimSpace(s) {
		switch {
		case r == utf8.RuneError:
			r = '\uFFFD'
		case unicode.IsSpace(r):
			if space {
				continue
			}
			r = ' '
		case unicode.IsControl(r) || r == '\u200b' || unicode.Is(unicode.Bidi_Control, r):
			r = '\uFFFD'
		}
		space = r == ' '
		if max > 0 && n == max {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// dash stands in for an empty table cell.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// fmtTime formats an API time for a table; the zero time is "-".
func fmtTime(t wire.Time) string {
	tt := time.Time(t)
	if tt.IsZero() {
		return "-"
	}
	return tt.UTC().Format(time.RFC3339)
}

func fmtTimePtr(t *wire.Time) string {
	if t == nil || time.Time(*t).IsZero() {
		return ""
	}
	return fmtTime(*t)
}

// state names a queue's or a schedule's state: paused or active.
func state(paused bool) string {
	if paused {
		return "paused"
	}
	return "active"
}

// fmtSeconds formats a number of seconds as a Go duration.
func fmtSeconds(s float64) string {
	if s <= 0 {
		return ""
	}
	return time.Duration(s * float64(time.Second)).String()
}

// attempts formats "attempt/max".
func attempts(t *wire.Task) string {
	return fmt.Sprintf("%d/%d", t.Attempt, t.MaxAttempts)
}

// compact returns a JSON value on one line, "" for none or null.
func compact(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(raw); err != nil {
		return string(raw)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// printJSON writes a JSON document indented, with a final newline.
func printJSON(out io.Writer, raw []byte) error {
	var b bytes.Buffer
	if err := json.Indent(&b, bytes.TrimSpace(raw), "", "  "); err != nil {
		return err
	}
	b.WriteByte('\n')
	_, err := out.Write(b.Bytes())
	return err
}
