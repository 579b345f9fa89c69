package dtq

import (
	"sort"
	"strings"
)

func indexByte(s string, c byte) int {
	if i := strings.IndexByte(s, c); i >= 0 {
		return i
	}
	return len(s)
}

func splitComma(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func sortStrings(s []string) { sort.Strings(s) }
