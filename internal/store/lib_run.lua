-- lib_run.lua: consumer groups, entry ids, and the state of runs (the Run
-- field, implicit first runs, records); part of the store's library (lib.go).

-- create_group creates band p's consumer group at id 0 (MKSTREAM) unless
-- it exists (ensure_group, internal/delivery/group.lua), and keeps in info
-- field g<p> the last entry a recreated group may deliver again: the first
-- group of a band records "0-0" (its entries were never delivered), a later
-- one the band's last entry (those up to it may be acknowledged leftovers of
-- finished tasks: start.lua checks them).
local function create_group(info, band, group, p)
  if not ensure_group(band, group) then return end -- BUSYGROUP: it exists
  local f = 'g' .. p
  if redis.call('HEXISTS', info, f) == 0 then
    redis.call('HSET', info, f, '0-0')
    return
  end
  local last = redis.call('XREVRANGE', band, '+', '-', 'COUNT', 1)
  if #last > 0 then redis.call('HSET', info, f, last[1][1]) end
end

-- Crockford base32, the alphabet of ULIDs (internal/taskid)
local b32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

-- b32_digits encodes the non-negative integer x (below 2^53) as n base32
-- digits, most significant first: the significant ones computed, the
-- leading zeros one string.rep (born_ulid's sequence numbers are small:
-- the 13-digit loop it replaced cost ~3.5 µs per entry in take.lua).
local function b32_digits(x, n)
  local out, i = {}, n
  while x > 0 and i > 0 do
    local d = x % 32
    out[i] = string.byte(b32, d + 1)
    x = (x - d) / 32
    i = i - 1
  end
  if i == n then return string.rep('0', n) end
  return string.rep('0', i) .. string.char(unpack(out, i + 1, n))
end

-- born_ulid returns the ULID of the task born as entry eid of band p, as
-- taskid.FromEntry makes it: the entry's ms in 10 digits, a digit of 16 +
-- band, its sequence number in 13 digits, "00". ms_cache maps an entry
-- id's ms part to its digits (entries of a batch share few). Nil for a
-- sequence number of 2^53 or more (beyond a Lua number's exact integers).
local function born_ulid(p, eid, ms_cache)
  local ms, seq = string.match(eid, '^(%d+)-(%d+)$')
  if not ms or #seq > 16 or (#seq == 16 and seq > '9007199254740991') then return nil end
  local head = ms_cache[ms]
  if not head then
    head = b32_digits(tonumber(ms), 10)
    ms_cache[ms] = head
  end
  local f = 17 + tonumber(p)
  local n = tonumber(seq)
  local tail
  if n < 32 then
    tail = '000000000000' .. string.sub(b32, n + 1, n + 1)
  else
    tail = b32_digits(n, 13)
  end
  return head .. string.sub(b32, f, f) .. tail .. '00'
end

-- queue_depth is what a queue's max depth bounds: its tasks queued or
-- running — each band's entries (KEYS[first + p] for band p) less those
-- acknowledged and left for a later trim (info field b<p>: finished, or
-- retried as a new entry) — plus those scheduled and waiting for their
-- group's turn.
local function queue_depth(info, first, schedule, gwait)
  local depth = redis.call('ZCARD', schedule) + redis.call('ZCARD', gwait)
  local behind = redis.call('HMGET', info, 'b0', 'b1', 'b2', 'b3', 'b4', 'b5', 'b6', 'b7', 'b8', 'b9')
  for p = 0, 9 do
    depth = depth + math.max(0, redis.call('XLEN', KEYS[first + p]) - (tonumber(behind[p + 1]) or 0))
  end
  return depth
end

-- id_le reports whether stream id a is at or before stream id b (both
-- "<ms>-<seq>" as Redis writes them: decimal, no leading zeros). It parses
-- no number — tonumber is strtod here, and the pattern it took ~0.35 µs a
-- call: 32 µs a finish.lua call of 30 tasks went to the range of its
-- XPENDING — for digit strings of one length compare as their numbers.
local function id_le(a, b)
  local i, j = string.find(a, '-', 1, true), string.find(b, '-', 1, true)
  if i ~= j then return i < j end
  if #a == #b then return a <= b end
  if string.sub(a, 1, i - 1) ~= string.sub(b, 1, j - 1) then return a < b end
  return #a < #b
end

-- ack_del acknowledges and deletes band entry eid.
local function ack_del(band, group, eid)
  redis.call('XACK', band, group, eid)
  redis.call('XDEL', band, eid)
end

-- run_state parses a Run value: run, attempt, crashes, started ms, cancel
-- ("0"/"1") and worker; nil for none or RunWithdrawn.
local function run_state(v)
  if not v then return nil end
  local run, att, cr, st, cx, w = string.match(v, '^(%d+)|(%d+)|(%d+)|(%d+)|(%d)|(.*)$')
  if not run then return nil end
  return { run = run, attempt = att, crashes = cr, started = st, cancel = cx, worker = w }
end

-- run_value formats a Run value.
local function run_value(s)
  return s.run .. '|' .. s.attempt .. '|' .. s.crashes .. '|' .. s.started .. '|' .. s.cancel .. '|' .. s.worker
end

-- claims_of adds to set (keyed by entry id: one set per band) those of
-- entry ids eids of band stream band pending for consumer — with first,
-- only those in their first delivery. One XPENDING of consumer's entries
-- over the ids' range. The ids are stream ids (the store checks those a
-- client hands in: ValidEntryID).
local function claims_of(band, group, consumer, eids, set, first)
  local lo, hi = eids[1], eids[1]
  if not lo then return end
  for k = 2, #eids do
    local eid = eids[k]
    if id_le(eid, lo) then lo = eid elseif id_le(hi, eid) then hi = eid end
  end
  local r = redis.pcall('XPENDING', band, group, lo, hi, 1000000, consumer)
  if type(r) ~= 'table' or r.err then return end
  for _, e in ipairs(r) do
    if not first or e[4] == 1 then set[e[1]] = true end
  end
end

-- first_runs adds to set (keyed by entry id) those of entry ids eids of
-- band stream band pending for consumer in their first delivery: a task
-- born as its entry and claimed by a plain read runs its first execution
-- without a Run field (store.StartImplicit), fenced by its pending entry —
-- the worker that claimed it, not yet reclaimed (a reclaim adds a
-- delivery).
local function first_runs(band, group, consumer, eids, set)
  claims_of(band, group, consumer, eids, set, true)
end

-- NONE is an empty set, for a band that has none.
local NONE = {}

-- add_candidate notes that item i's entry eid of band p may be an
-- implicit first run: cand[p] lists the band's entry ids, at[p][eid] = i.
local function add_candidate(cand, at, p, eid, i)
  local l = cand[p]
  if not l then l = {}; cand[p] = l end
  l[#l + 1] = eid
  local ix = at[p]
  if not ix then ix = {}; at[p] = ix end
  ix[eid] = i
end

-- implicit_runs returns, per band, the set of the candidates' entry ids
-- (add_candidate) that are consumer's implicit first runs: pending for it
-- in their first delivery (first_runs) — or, for an item with no Run
-- field (states[i] nil), an entry at or before its band's g<p> (its
-- consumer group was recreated on it, see start.lua) with no record (no
-- packed one in finished hash fin, no task hash): its pending state went
-- with the group, and its run is taken as the caller's. Band p's stream is
-- KEYS[bands + p], item i's task hash KEYS[tasks + i] and ULID ulids[i].
local function implicit_runs(cand, at, states, ulids, bands, tasks, group, consumer, info, fin)
  local firsts, marks = {}, nil
  for p, eids in pairs(cand) do
    local set = {}
    firsts[p] = set
    first_runs(KEYS[bands + tonumber(p)], group, consumer, eids, set)
    for _, eid in ipairs(eids) do
      local i = at[p][eid]
      if not set[eid] and not states[i] then
        marks = marks or redis.call('HMGET', info, 'g0', 'g1', 'g2', 'g3', 'g4', 'g5', 'g6', 'g7', 'g8', 'g9')
        local last = marks[1 + tonumber(p)]
        if last and last ~= '0-0' and id_le(eid, last) and not redis.call('HGET', fin, ulids[i]) and
            redis.call('EXISTS', KEYS[tasks + i]) == 0 then
          set[eid] = true
        end
      end
    end
  end
  return firsts
end

-- implicit_state is the Run state of an implicit first run (first_runs)
-- started at started (ms) by worker.
local function implicit_state(started, worker)
  if not string.match(started or '', '^%d+$') then started = '0' end
  return { run = '1', attempt = '1', crashes = '0', started = started, cancel = '0', worker = worker }
end

-- record_status returns the status and run of a packed record (see
-- store.parseRecord: R3, or R4 for a workflow's task; R5, R6 the same of
-- a traced task; R7 a light ordered task's), or nil.
local function record_status(v)
  if not v then return nil end
  return string.match(v, '^R[3-7]|(%u+)|%d+|(%d+)|')
end

