-- gpromote.lua: move tasks waiting for their group's turn into their bands.
--
-- KEYS[1]        gwait zset (members "<group>|<9-prio>|<seq>|<ULID>")
-- KEYS[2]        gcount hash (per group: admitted entries not started)
-- KEYS[3..12]    band streams of priority 0..9
-- KEYS[13..]     the task hash of each member, in order
--
-- ARGV[1]        the queue's name (a task's id is "<queue>-<ULID>")
-- ARGV[2]        N; then the N members
--
-- A member still waiting whose group has room in the bands (fewer than
-- its window of admitted entries not started, lib.lua's group_window) leaves gwait and its task
-- enters its band as an admitted entry (status QUEUED throughout). A member
-- whose task is no longer QUEUED (gone, cancelled) just leaves gwait; one
-- whose group is full stays.
--
-- Returns the number of tasks moved.

local gwait, gcount = KEYS[1], KEYS[2]
local queue = ARGV[1]
local n = tonumber(ARGV[2])

local moved = 0
for i = 0, n - 1 do
  local m, tk = ARGV[3 + i], KEYS[13 + i]
  local grp, inv = string.match(m, '^([^|]+)|(%d)|')
  if grp and redis.call('ZSCORE', gwait, m) then
    local f = redis.call('HMGET', tk, 'status', 'gwait')
    if f[1] ~= 'QUEUED' or f[2] ~= m then
      redis.call('ZREM', gwait, m)
    elseif tonumber(redis.call('HGET', gcount, grp) or '0') < group_window(gcount, grp) then
      redis.call('ZREM', gwait, m)
      redis.call('HDEL', tk, 'gwait')
      readd(KEYS[3 + 9 - tonumber(inv)], tk, queue .. '-' .. string.sub(m, -26), grp)
      redis.call('HINCRBY', gcount, grp, 1)
      moved = moved + 1
    end
  end
end
return moved
