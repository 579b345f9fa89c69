package dtq

import (
	"sort"
	"strings"
)

// cutByte is strings.Cut for one byte.
func cutByte(s string, c byte) (before, after string, found bool) {
	return strings.Cut(s, string(c))
}

func sortStrings(s []string) { sort.Strings(s) }

// truncate cuts s to n bytes, marking the cut with an ellipsis.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// maxErrorText bounds the error text stored with a task.
const maxErrorText = 2048
