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
