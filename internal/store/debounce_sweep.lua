-- debounce_sweep.lua: delete the debounce hash's fields whose task is no
-- longer pending (debounce.lua), so the hash holds about as many fields as
-- there are debounced tasks waiting.
--
-- KEYS[1]        debounce hash
-- KEYS[2..N+1]   the fields' task hashes, in order
--
-- ARGV[1..2N]    field, value: 2 values per field (the caller read them)
--
-- A field is deleted only if it still holds that value and its task is
-- not pending: its due time (in the value) has passed on the Redis clock,
-- or its task's hash is gone or no longer SCHEDULED (cancelled). A
-- submission of the identity would create a new task then anyway.
-- Returns the number deleted.

local now = now_ms()
local deleted = 0
for i = 1, #KEYS - 1 do
  local field, value = ARGV[2 * i - 1], ARGV[2 * i]
  local due = tonumber(string.match(value, ' (%d+)$') or '0')
  if redis.call('HGET', KEYS[1], field) == value
      and (due <= now or redis.call('HGET', KEYS[1 + i], 'status') ~= 'SCHEDULED') then
    redis.call('HDEL', KEYS[1], field)
    deleted = deleted + 1
  end
end
return deleted
