package delivery

import _ "embed"

//go:embed group.lua
var groupLib string

// GroupLib returns the Lua library of consumer-group recovery (group.lua)
// that the queue primitive's and the task engine's scripts are built with,
// prepended to their text: nogroup(r), whether a redis.pcall reply is a
// NOGROUP error, and ensure_group(stream, group), which recreates a missing
// group at id 0 (with MKSTREAM). The text is constant.
func GroupLib() string { return groupLib }
