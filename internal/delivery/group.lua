-- group.lua: consumer-group recovery, shared by the queue primitive's
-- scripts (internal/queuestore) and the task engine's (internal/store):
-- prepended to their text as a library (delivery.GroupLib), so script text
-- stays constant. It touches only the streams its callers name, from KEYS.

-- nogroup reports whether r, a redis.pcall reply, is Redis's NOGROUP
-- error: the consumer group, or its stream, is gone and must be recreated.
local function nogroup(r)
  return type(r) == 'table' and r.err and string.sub(r.err, 1, 7) == 'NOGROUP'
end

-- ensure_group creates stream's consumer group at id 0, and the stream if
-- it is missing (MKSTREAM): every entry still in the stream is delivered
-- again. True when it created the group; false when it could not, above
-- all because it exists (BUSYGROUP).
local function ensure_group(stream, group)
  local r = redis.pcall('XGROUP', 'CREATE', stream, group, '0', 'MKSTREAM')
  return not (type(r) == 'table' and r.err)
end
