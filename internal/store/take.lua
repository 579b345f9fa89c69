-- take.lua: a busy worker's claim and start in one call. It claims up to
-- `credit` new entries with one XREADGROUP over bands 9 down to `low` and
-- starts at once those of the common case — a task born as its entry, new
-- to this group, no Run field, the queue not paused — as start.lua would
-- (Run field "1|1|0|<now>|0|<worker>", set with one HSET). Every other entry
-- is returned unstarted for start.lua, whose KEYS name its task hash (this
-- script touches no task hash).
--
-- KEYS[1]        info hash (fields "paused", g0..g9)
-- KEYS[2]        run hash (running tasks' state, by ULID)
-- KEYS[3..12]    band streams of priority 0..9
--
-- ARGV[1]        consumer group
-- ARGV[2]        consumer (the worker's id)
-- ARGV[3]        credit (> 0): entries to start at most
-- ARGV[4]        low: the lowest band read (0..9)
-- ARGV[5]        "types" when the worker runs some task types only, listed
--                in ARGV[6..] (absent: every type): an entry of another
--                type is left unstarted, for start.lua to give back
--
-- One XREADGROUP returns up to credit entries per band: those beyond the
-- credit, in band order, are returned to be given back (start.lua puts
-- them back at the tail of their band).
--
-- Returns { status, now, entries }:
--   status   0, or -1 when a band's consumer group is missing (nothing
--            read: read.lua recreates it)
--   now      the start time of the started entries (Unix ms), "" if none
--   entries  4 values per entry: band, entry id, code — 1 started (run 1,
--            attempt 1, crashes 0), 0 for start.lua, 2 for start.lua to give
--            back — and its fields (flat)

local info, runs = KEYS[1], KEYS[2]
local group, worker = ARGV[1], ARGV[2]
local credit, low = tonumber(ARGV[3]), tonumber(ARGV[4])
local runs_type = nil -- nil: every type
if ARGV[5] == 'types' then
  runs_type = {}
  for i = 6, #ARGV do runs_type[ARGV[i]] = true end
end

local args = { 'GROUP', group, worker, 'COUNT', ARGV[3], 'STREAMS' }
local bandOf = {}
for p = 9, low, -1 do
  args[#args + 1] = KEYS[3 + p]
  bandOf[KEYS[3 + p]] = p
end
for _ = 9, low, -1 do args[#args + 1] = '>' end
local r = redis.pcall('XREADGROUP', unpack(args))
if type(r) == 'table' and r.err then
  if nogroup(r) then return { -1, '', {} } end
  return redis.error_reply(r.err)
end
if not r then return { 0, '', {} } end

local inf = redis.call('HMGET', info, 'paused', 'g0', 'g1', 'g2', 'g3', 'g4', 'g5', 'g6', 'g7', 'g8', 'g9')
local paused = inf[1] == '1'

-- born reports whether fields f are those of a task's birth entry (a
-- type, no task id)
local function born(f)
  if f[1] ~= 't' then return false end
  for j = 3, #f, 2 do
    if f[j] == 'i' then return false end
  end
  return true
end

local out, ulids, at = {}, {}, {}
local msCache = {}
local taken = 0
for _, s in ipairs(r) do
  local p = bandOf[s[1]]
  local last = inf[2 + p]
  if last == '0-0' then last = nil end
  for _, e in ipairs(s[2]) do
    local code = 0
    if taken >= credit then
      code = 2
    else
      taken = taken + 1
      if not paused and born(e[2]) and not (last and id_le(e[1], last)) and
          (runs_type == nil or runs_type[e[2][2]]) then
        local u = born_ulid(p, e[1], msCache)
        if u then
          ulids[#ulids + 1] = u
          at[#ulids] = #out + 3
        end
      end
    end
    out[#out + 1] = p
    out[#out + 1] = e[1]
    out[#out + 1] = code
    out[#out + 1] = e[2]
  end
end

local nowS = ''
if #ulids > 0 then
  local states = redis.call('HMGET', runs, unpack(ulids))
  local now
  now, nowS = now_ms()
  local starts = {}
  for i, u in ipairs(ulids) do
    if not states[i] then
      starts[#starts + 1] = u
      starts[#starts + 1] = '1|1|0|' .. nowS .. '|0|' .. worker
      out[at[i]] = 1
    end
  end
  if #starts > 0 then
    redis.call('HSET', runs, '~', run_pad(), unpack(starts))
  end
end
return { 0, nowS, out }
