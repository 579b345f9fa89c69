// Package taskscript holds the task engine's Lua scripts and exactly one
// typed Go wrapper per script. Each .lua file starts with a header listing
// every KEYS[i], ARGV[i] and return value.
//
// Every key a script touches is passed in KEYS, all under one queue's hash
// tag: a script never derives a key from data it reads. So claiming is two
// calls — read.lua (streams only) returns task ids, and start.lua receives
// their task hashes in KEYS.
package taskscript

import (
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/redis/rueidis"
)

var (
	//go:embed enqueue.lua
	enqueueSource string
	//go:embed read.lua
	readSource string
	//go:embed start.lua
	startSource string
	//go:embed finish.lua
	finishSource string
	//go:embed renew.lua
	renewSource string
	//go:embed promote.lua
	promoteSource string
	//go:embed cancel.lua
	cancelSource string
	//go:embed dlq.lua
	dlqSource string

	enqueueScript = newScript(enqueueSource)
	readScript    = rueidis.NewLuaScript(readSource)
	startScript   = rueidis.NewLuaScript(startSource)
	finishScript  = newScript(finishSource)
	renewScript   = rueidis.NewLuaScript(renewSource)
	promoteScript = rueidis.NewLuaScript(promoteSource)
	cancelScript  = rueidis.NewLuaScript(cancelSource)
	dlqScript     = rueidis.NewLuaScript(dlqSource)
)

// bands appends the queue's ten band streams, priority 0 to 9.
func bands(ks []string, k keys.Tasks) []string {
	for p := range keys.Bands {
		ks = append(ks, k.Band(p))
	}
	return ks
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

func itoa(n int) string { return strconv.Itoa(n) }

func unexpected(script string, v any) error {
	return fmt.Errorf("taskscript: %s: unexpected reply %v", script, v)
}
