-- gsweep.lua: find the tasks waiting for their group's turn whose group has
-- room in the bands — the repair pass of the scheduler's leader for a
-- worker lost between a start and its gpromote.lua, and for counts that
-- drifted.
--
-- KEYS[1]        gwait zset (members "<group>|<9-prio>|<seq>|<ULID>")
-- KEYS[2]        gcount hash (per group: admitted entries not started)
-- KEYS[3]        info hash (b0..b9: acknowledged entries not yet trimmed)
-- KEYS[4..13]    band streams of priority 0..9
--
-- ARGV[1]        consumer group
-- ARGV[2]        the group to start after ("" = the first)
-- ARGV[3]        the most groups to visit
--
-- When no band holds a queued entry (every entry is running or
-- acknowledged) no admitted entry waits there: every group's count is 0,
-- whatever gcount says, and is reset. Then, group by group from ARGV[2],
-- each group with waiters and room gives its best waiters for that room.
--
-- Returns { the group to go on after ("" = the walk is done), members... }.

local gwait, gcount, info = KEYS[1], KEYS[2], KEYS[3]
local cgroup, after, visits = ARGV[1], ARGV[2], tonumber(ARGV[3])

if redis.call('ZCARD', gwait) == 0 then return { '' } end

local queued = 0
for p = 0, 9 do
  local band = KEYS[4 + p]
  local n = redis.call('XLEN', band)
  if n > 0 then
    local pend = redis.pcall('XPENDING', band, cgroup)
    local held = 0
    if type(pend) == 'table' and not pend.err then held = pend[1] end
    queued = queued + n - held - tonumber(redis.call('HGET', info, 'b' .. p) or '0')
  end
end
if queued <= 0 then
  local fs = redis.call('HKEYS', gcount)
  for _, f in ipairs(fs) do
    if f ~= '#' and string.sub(f, 1, 2) ~= 'w:' then redis.call('HDEL', gcount, f) end
  end
end

return walk_waiters(gwait, '|', after, visits, function(grp)
  return group_window(gcount, grp) - tonumber(redis.call('HGET', gcount, grp) or '0')
end)
