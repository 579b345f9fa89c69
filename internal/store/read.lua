-- read.lua: claim up to `credit` task entries for one worker, highest
-- priority band first, with their fields. It touches only the queue's
-- streams and info hash; the claimed tasks are started by start.lua, whose
-- KEYS name them.
--
-- KEYS[1]        info hash (field "paused")
-- KEYS[2..11]    band streams of priority 0..9
--
-- ARGV[1]        consumer group
-- ARGV[2]        consumer (the worker)
-- ARGV[3]        credit (> 0)
-- ARGV[4]        reclaim min idle, ms (0 = no reclaim pass)
-- ARGV[5..14]    reclaim cursor of band 0..9
-- ARGV[15]       "1" to make sure every band has its stream and group first
--                (a worker's first read: its blocking reads span all bands)
--
-- While credit remains: first a reclaim pass over band 9 down to 0
-- (XAUTOCLAIM from each band's cursor: entries of crashed workers), then new
-- entries (XREADGROUP >) of band 9 down to 0. The reclaim pass looks at
-- every band before new entries take the credit: a reclaimed task was
-- started once already, and a backlog of new higher-priority entries must
-- not keep it from being taken over. A missing group or stream is recreated
-- at id 0: entries of running or finished tasks delivered again are skipped
-- by start.lua.
--
-- Returns { paused, entries, cursors }:
--   paused   1 when the queue is paused (nothing claimed), else 0
--   entries  4 values per entry: band, entry id, reclaimed (0/1), its
--            fields (flat)
--   cursors  the 10 reclaim cursors, band 0..9

local info = KEYS[1]
local group, consumer = ARGV[1], ARGV[2]
local credit = tonumber(ARGV[3])
local minIdle = tonumber(ARGV[4])

local cursors = {}
for p = 0, 9 do cursors[p + 1] = ARGV[5 + p] end
if redis.call('HGET', info, 'paused') == '1' then
  return { 1, {}, cursors }
end

local function nogroup(r)
  return type(r) == 'table' and r.err and string.sub(r.err, 1, 7) == 'NOGROUP'
end

if ARGV[15] == '1' then
  for p = 0, 9 do create_group(info, KEYS[2 + p], group, p) end
end

local entries = {}
local function take(p, e, reclaimed)
  local n = #entries
  entries[n + 1], entries[n + 2], entries[n + 3], entries[n + 4] = p, e[1], reclaimed, e[2]
  credit = credit - 1
end

if minIdle > 0 then
  for p = 9, 0, -1 do
    if credit <= 0 then break end
    local band = KEYS[2 + p]
    local r = redis.pcall('XAUTOCLAIM', band, group, consumer, minIdle, cursors[p + 1], 'COUNT', credit)
    if nogroup(r) then
      create_group(info, band, group, p)
      cursors[p + 1] = '0-0'
    elseif type(r) == 'table' and r.err then
      return redis.error_reply(r.err)
    else
      cursors[p + 1] = r[1]
      for _, e in ipairs(r[2]) do
        if e then take(p, e, 1) end
      end
    end
  end
end

for p = 9, 0, -1 do
  if credit <= 0 then break end
  local band = KEYS[2 + p]
  local r = redis.pcall('XREADGROUP', 'GROUP', group, consumer, 'COUNT', credit, 'STREAMS', band, '>')
  if nogroup(r) then
    create_group(info, band, group, p)
    r = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', credit, 'STREAMS', band, '>')
  elseif type(r) == 'table' and r.err then
    return redis.error_reply(r.err)
  end
  if r then
    for _, e in ipairs(r[1][2]) do take(p, e, 0) end
  end
end
return { 0, entries, cursors }
