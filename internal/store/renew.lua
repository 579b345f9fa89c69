-- renew.lua: renew the visibility of a worker's running tasks, fenced
-- by their run, and report cancellations.
--
-- KEYS[1]        run hash (running tasks' state, by ULID)
-- KEYS[2..11]    band streams of priority 0..9
-- KEYS[12]       info hash (fields g0..g9)
-- KEYS[13]       finished hash (packed records, by ULID)
-- KEYS[13+i]     item i's task hash (1..N)
--
-- ARGV[1]        consumer group
-- ARGV[2]        consumer (the worker)
-- ARGV[3]        N; then 5 values per item: ULID, band, entry id, run, and
--                the run's start (Unix ms)
--
-- An item renews (XCLAIM IDLE 0 to this consumer) only if its task's Run
-- field holds exactly that run; otherwise the worker lost it (reclaimed and
-- restarted elsewhere, or finished) and nothing changes — renewal never
-- takes a task back. An implicit first run (no Run field: first_runs)
-- renews while its entry is pending for this consumer in its first
-- delivery, and gets its Run field here ("1|1|0|<start>|0|<consumer>"):
-- from its first renewal on, a longer run is fenced, cancelled and seen
-- as any other. So does one whose entry lost its pending state with a
-- recreated consumer group (at or before the band's g<p>, no record: no
-- packed one, no hash — a takeover writes one), as finish.lua takes its
-- outcome.
--
-- Returns one code per item: 0 lost, 1 renewed, 2 renewed and its
-- cancellation was requested.

local runs = KEYS[1]
local group, consumer = ARGV[1], ARGV[2]
local n = tonumber(ARGV[3])
local ulids = {}
for i = 0, n - 1 do ulids[i + 1] = ARGV[4 + i * 5] end
local states = redis.call('HMGET', runs, unpack(ulids))

local cand, at = {}, {}
for i = 0, n - 1 do
  local a = 4 + i * 5
  if not states[i + 1] and ARGV[a + 3] == '1' then add_candidate(cand, at, ARGV[a + 1], ARGV[a + 2], i + 1) end
end
local firsts = implicit_runs(cand, at, states, ulids, 2, 13, group, consumer, KEYS[12], KEYS[13])

local out, claims, made = {}, {}, {}
for i = 0, n - 1 do
  local a = 4 + i * 5
  local p, eid, run = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
  local v = states[i + 1]
  local res = 0
  local r, cancel
  if v then
    r, cancel = string.match(v, '^(%d+)|%d+|%d+|%d+|(%d)|')
  elseif (firsts[p] or NONE)[eid] then
    r, cancel = '1', '0'
    made[#made + 1] = ARGV[a]
    made[#made + 1] = run_value(implicit_state(ARGV[a + 4], consumer))
  end
  if r == run then
    local ids = claims[p]
    if not ids then ids = {}; claims[p] = ids end
    ids[#ids + 1] = eid
    res = 1
    if cancel == '1' then res = 2 end
  end
  out[#out + 1] = res
end
if #made > 0 then redis.call('HSET', runs, '~', run_pad(), unpack(made)) end
for p, ids in pairs(claims) do
  local args = {KEYS[2 + tonumber(p)], group, consumer, '0'}
  for _, eid in ipairs(ids) do args[#args + 1] = eid end
  args[#args + 1], args[#args + 2], args[#args + 3] = 'IDLE', '0', 'JUSTID'
  redis.call('XCLAIM', unpack(args))
end
return out
