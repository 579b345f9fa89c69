// Package scripts holds dtq's Lua scripts and exactly one typed Go wrapper
// per script. Each .lua file starts with a header listing every KEYS[i],
// ARGV[i] and return value; the wrapper builds KEYS from internal/keys and
// maps the replies to Go values.
//
// Script text is constant and every key a script touches is passed in KEYS,
// all under one queue's hash tag, so every script runs on Redis Cluster.
package queuestore

import (
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/dtq-dev/dtq/internal/delivery"
	"github.com/dtq-dev/dtq/internal/script"
)

var (
	//go:embed put.lua
	putSource string
	//go:embed fetch.lua
	fetchSource string
	//go:embed settle.lua
	settleSource string
	//go:embed ack.lua
	ackSource string

	putScript    = script.New("put", putSource)
	fetchScript  = script.New("fetch", delivery.GroupLib(), fetchSource)
	settleScript = script.New("settle", settleSource)
	ackScript    = script.New("ack", ackSource)
)

// topicIndex assigns 1-based script indexes to topics in order of first use.
type topicIndex struct {
	names []string
	index map[string]int
}

func (t *topicIndex) of(name string) int {
	if i, ok := t.index[name]; ok {
		return i
	}
	if t.index == nil {
		t.index = map[string]int{}
	}
	t.names = append(t.names, name)
	t.index[name] = len(t.names)
	return len(t.names)
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func unexpected(script string, v any) error {
	return fmt.Errorf("scripts: %s: unexpected reply %v", script, v)
}
