-- lib.lua: functions shared by the store's scripts, prepended to each of
-- them (script text stays constant). Field names follow schema.go.

-- run_pad returns the value of the run hash's field RunPad (schema.go):
-- longer than Redis's hash-max-listpack-value (64 bytes by default), it
-- keeps the hash a hashtable. Holding the running tasks (~100 fields), a
-- listpack finds each field by a linear scan: ~1.2 µs per field per
-- command, ~4 µs per task over a start and a finish.
local function run_pad() return string.rep('-', 256) end

-- now_ms returns the Redis time in Unix ms, as a number and as a string.
local function now_ms()
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  return now, string.format('%d', now)
end

-- entry_fields returns the fields of band entry eid as a table, or nil
-- when the entry is gone.
local function entry_fields(band, eid)
  local e = redis.call('XRANGE', band, eid, eid)
  if #e == 0 then return nil end
  local f, m = e[1][2], {}
  for j = 1, #f, 2 do m[f[j]] = f[j + 1] end
  return m
end

-- copy_spec writes into task hash tk the immutable fields of a task born
-- as entry eid of a band of priority prio: its record is made from the
-- entry (which is about to go). Returns the task's type, or nil when the
-- entry is gone.
local function copy_spec(tk, band, eid, prio)
  local m = entry_fields(band, eid)
  if not m then return nil end
  local created = string.match(eid, '^(%d+)-')
  redis.call('HSET', tk, 'type', m['t'], 'payload', m['p'], 'prio', prio, 'max_att', m['m'],
    'timeout', m['o'], 'created', created)
  if m['k'] then redis.call('HSET', tk, 'idem', m['k']) end
  if m['w'] then
    redis.call('HSET', tk, 'wf', m['w'], 'wstep', m['n'])
    if m['v'] then redis.call('HSET', tk, 'prev', m['v']) end
  end
  if m['x'] then redis.call('HSET', tk, 'trace', m['x']) end
  return m['t']
end

-- readd appends task id's entry to band from its hash (type, payload, max
-- attempts, timeout, created, and the idempotency hash, the schedule tick
-- that fired it, its limit key, its workflow step and its trace when it has
-- them), and notes the entry's id in the hash ("entry": cancel.lua deletes
-- the entry of a task cancelled while it waits there).
-- With group, the entry is one admitted under that group's window: it
-- carries "f" = group.
local function readd(band, tk, id, group)
  local s = redis.call('HMGET', tk, 'type', 'payload', 'max_att', 'timeout', 'created', 'idem', 'sched', 'tick', 'lkey',
    'wf', 'wstep', 'prev', 'trace')
  local f = { 'i', id, 't', s[1], 'p', s[2], 'm', s[3], 'o', s[4], 'c', s[5] }
  if s[6] then f[#f + 1], f[#f + 2] = 'k', s[6] end
  if s[7] then f[#f + 1], f[#f + 2], f[#f + 3], f[#f + 4] = 's', s[7], 'g', s[8] or '0' end
  if s[9] then f[#f + 1], f[#f + 2] = 'l', s[9] end
  if s[10] then f[#f + 1], f[#f + 2], f[#f + 3], f[#f + 4] = 'w', s[10], 'n', s[11] or '0' end
  if s[12] then f[#f + 1], f[#f + 2] = 'v', s[12] end
  if s[13] then f[#f + 1], f[#f + 2] = 'x', s[13] end
  if group then f[#f + 1], f[#f + 2] = 'f', group end
  local eid = redis.call('XADD', band, '*', unpack(f))
  redis.call('HSET', tk, 'entry', eid)
end

-- GROUP_WINDOW is store.GroupWindow: how many entries of one group the
-- bands hold at once, not started yet.
local GROUP_WINDOW = 10

-- group_window returns how many entries group may keep in the bands: the
-- window times its weight (gcount's field "w:<group>", default 1; no
-- group is named so). The bands serve a group in proportion to it.
local function group_window(gcount, group)
  return GROUP_WINDOW * (tonumber(redis.call('HGET', gcount, 'w:' .. group) or '1') or 1)
end

-- admit puts QUEUED task id (hash tk) of group and priority prio into band,
-- as an entry admitted under its group's window, when the group has room
-- there (gcount: admitted entries not started yet, per group); else it
-- waits in gwait, member "<group>|<9-prio>|<seq>|<ULID>" (store.GroupMember;
-- seq, 16 digits, counts in gcount's field "#"), until the start of one of
-- its group's entries moves it in. Its hash keeps the member ("gwait") while
-- it waits. Returns true when it entered the band.
local function admit(band, tk, id, group, prio, gwait, gcount)
  if tonumber(redis.call('HGET', gcount, group) or '0') < group_window(gcount, group) then
    readd(band, tk, id, group)
    redis.call('HINCRBY', gcount, group, 1)
    return true
  end
  local seq = redis.call('HINCRBY', gcount, '#', 1)
  local m = group .. '|' .. string.format('%d', 9 - tonumber(prio)) .. '|' .. string.format('%016d', seq) .. '|' ..
    string.sub(id, -26)
  redis.call('ZADD', gwait, 0, m)
  redis.call('HSET', tk, 'gwait', m)
  return false
end

-- waiters returns up to n members of zset (equal scores) that start with
-- prefix then sep, in order: the best waiters of a group (gwait, "|") or a
-- scope (limwait, "\n").
local function waiters(zset, prefix, sep, n)
  return redis.call('ZRANGEBYLEX', zset, '[' .. prefix .. sep, '[' .. prefix .. sep .. '\255', 'LIMIT', 0, n)
end

-- group_waiters returns up to n members of gwait of group, best first.
local function group_waiters(gwait, group, n) return waiters(gwait, group, '|', n) end

-- walk_waiters visits, from the prefix after ("" = the first), up to
-- visits of the prefixes (groups, scopes) of zset's members
-- "<prefix><sep>…" (no prefix holds sep; a member without one is dropped)
-- and returns { the prefix to go on after ("" = done), the best members
-- of each prefix for its room(prefix)... }.
local function walk_waiters(zset, sep, after, visits, room)
  local out = { '' }
  local from = '-'
  if after ~= '' then from = '(' .. after .. sep .. '\255' end
  for _ = 1, visits do
    local first = redis.call('ZRANGEBYLEX', zset, from, '+', 'LIMIT', 0, 1)
    if #first == 0 then
      out[1] = ''
      return out
    end
    local i = string.find(first[1], sep, 1, true)
    if not i then
      redis.call('ZREM', zset, first[1])
    else
      local prefix = string.sub(first[1], 1, i - 1)
      local r = room(prefix)
      if r > 0 then
        for _, m in ipairs(waiters(zset, prefix, sep, r)) do out[#out + 1] = m end
      end
      from = '(' .. prefix .. sep .. '\255'
      out[1] = prefix
    end
  end
  return out
end

-- group_left counts one admitted entry of group out of the bands (started,
-- or skipped). Returns the room the group has now.
local function group_left(gcount, group)
  local left = redis.call('HINCRBY', gcount, group, -1)
  if left <= 0 then
    redis.call('HDEL', gcount, group)
    left = 0
  end
  return group_window(gcount, group) - left
end

-- create_group creates band p's consumer group at id 0 (MKSTREAM) unless
-- it exists, and keeps in info field g<p> the last entry a recreated group
-- may deliver again: the first group of a band records "0-0" (its entries
-- were never delivered), a later one the band's last entry (those up to it
-- may be acknowledged leftovers of finished tasks: start.lua checks them).
local function create_group(info, band, group, p)
  local r = redis.pcall('XGROUP', 'CREATE', band, group, '0', 'MKSTREAM')
  if type(r) == 'table' and r.err then return end -- BUSYGROUP: it exists
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
-- store.parseRecord: R3, or R4 for a workflow's task), or nil.
local function record_status(v)
  if not v then return nil end
  return string.match(v, '^R[34]|(%u+)|%d+|(%d+)|')
end

-- decr subtracts n (a number) from field of hash key and returns the new
-- value: HINCRBY by a negative count, never by "-0" (Lua writes 0 negated
-- so, and Redis refuses it as no integer).
local function decr(key, field, n)
  if n == 0 then return tonumber(redis.call('HGET', key, field) or '0') end
  return redis.call('HINCRBY', key, field, string.format('%d', -n))
end

-- list_done lists finished tasks (a list of ids) as one entry of the done
-- stream, counted in info field "done".
local function list_done(info, done, ids)
  redis.call('XADD', done, '*', 'i', table.concat(ids, ' '))
  redis.call('HINCRBY', info, 'done', #ids)
end

-- prune_done removes up to max entries of the done stream older than
-- cutoff (a Unix ms string), the packed records of their tasks with them
-- (a task's hash expires by itself). Returns the entries removed.
local function prune_done(info, done, fin, cutoff, max)
  local es = redis.call('XRANGE', done, '-', cutoff, 'COUNT', max)
  if #es == 0 then return 0 end
  local us, eids = {}, {}
  for _, e in ipairs(es) do
    eids[#eids + 1] = e[1]
    for id in string.gmatch(e[2][2], '%S+') do us[#us + 1] = string.sub(id, -26) end
  end
  if #us > 0 then redis.call('HDEL', fin, unpack(us)) end
  redis.call('XDEL', done, unpack(eids))
  decr(info, 'done', #us)
  return #es
end

-- trim_band trims band p: every entry older than its oldest pending one
-- has been acknowledged, so XTRIM MINID removes them in one sweep (up to the
-- last delivered one when none is pending); info field b<p> counts the
-- acknowledged entries still there. With sweep, those a long-running task
-- holds back (acknowledged, newer than it) are deleted one by one too. It
-- returns how many acknowledged entries are still there.
local function trim_band(info, band, group, p, sweep)
  local field = 'b' .. p
  local pend = redis.call('XPENDING', band, group)
  local trimmed = 0
  if pend[1] > 0 then
    trimmed = redis.call('XTRIM', band, 'MINID', pend[2])
  else
    for _, g in ipairs(redis.call('XINFO', 'GROUPS', band)) do
      local name, last
      for j = 1, #g, 2 do
        if g[j] == 'name' then name = g[j + 1] elseif g[j] == 'last-delivered-id' then last = g[j + 1] end
      end
      if name == group and last then
        local ms, seq = string.match(last, '^(%d+)-(%d+)$')
        trimmed = redis.call('XTRIM', band, 'MINID', ms .. '-' .. string.format('%d', tonumber(seq) + 1))
      end
    end
  end
  local behind = decr(info, field, trimmed)
  if sweep and behind > 0 and pend[1] > 0 then
    -- the acknowledged entries between the oldest pending one and the
    -- last delivered: those not pending
    local pending = {}
    for _, e in ipairs(redis.call('XPENDING', band, group, pend[2], '+', 1000)) do pending[e[1]] = true end
    local acked = {}
    for _, e in ipairs(redis.call('XRANGE', band, pend[2], pend[3], 'COUNT', 1000)) do
      if not pending[e[1]] then acked[#acked + 1] = e[1] end
    end
    if #acked > 0 then
      behind = decr(info, field, redis.call('XDEL', band, unpack(acked)))
    end
  end
  if behind < 0 then redis.call('HSET', info, field, '0') end
  return behind
end

-- ack_trim acknowledges entries ids of band p; the entries acknowledged
-- and still there are counted in info field b<p>. Once 128 of them are
-- there the band is trimmed (trim_band); past 2048 held back by a
-- long-running task, this batch's are deleted one by one.
local function ack_trim(info, band, group, p, ids)
  redis.call('XACK', band, group, unpack(ids))
  local field = 'b' .. p
  if redis.call('HINCRBY', info, field, #ids) < 128 then return end
  if trim_band(info, band, group, p, false) > 2048 then
    decr(info, field, redis.call('XDEL', band, unpack(ids)))
  end
end

-- Scoped limits (a task type's, a limit key's): limscope hash field <scope>
-- = "<max running>/<rate n>/<rate period ms>/<burst>"; limits hash fields
-- <scope>\ntat its GCRA state (ms), <scope>\npause no start before (ms);
-- limuse hash: leases live per scope; limlease zset: member
-- "<scope>\n<ULID>|<run>", score expiry.

-- scope_def returns the limit of scope as {max, n, per, burst} (a limit
-- key with none of its own takes "k:*"'s), or nil.
local function scope_def(defs, scope)
  local v = redis.call('HGET', defs, scope)
  if not v and string.sub(scope, 1, 2) == 'k:' then v = redis.call('HGET', defs, 'k:*') end
  if not v then return nil end
  local m, n, per, b = string.match(v, '^(%d+)/(%d+)/(%d+)/(%d+)$')
  if not m then return nil end
  return { max = tonumber(m), n = tonumber(n), per = tonumber(per), burst = math.max(1, tonumber(b)) }
end

-- scope_sweep deletes up to 100 expired scoped leases, counting them out
-- of limuse. Returns the scopes they were of (a set).
local function scope_sweep(use, leases, now)
  local freed = {}
  local ex = redis.call('ZRANGEBYSCORE', leases, '-inf', now, 'LIMIT', 0, 100)
  for _, m in ipairs(ex) do
    local scope = string.match(m, '^(.*)\n')
    if scope then
      freed[scope] = true
      if redis.call('HINCRBY', use, scope, -1) <= 0 then redis.call('HDEL', use, scope) end
    end
  end
  if #ex > 0 then redis.call('ZREM', leases, unpack(ex)) end
  return freed
end

-- scope_take checks the scoped limits of a task (its scopes, a list) for
-- a start now, and when they all have room takes it: a lease per
-- concurrency limit ("<scope>\n<holder>", holder "<ULID>|<run>", expiring
-- after ttl ms) and a token
-- per rate limit, except that of scope reserved (a start it reserved when
-- it was held back). Returns nil then; else 'wait', scope (a concurrency
-- limit is full) or 'at', scope, ms, rate (no start before ms: a pause,
-- or with rate true the rate limit, whose start at ms is reserved here).
local function scope_take(sdefs, limits, use, leases, scopes, holder, now, ttl, reserved)
  local defs = {}
  for i, s in ipairs(scopes) do
    local d = scope_def(sdefs, s)
    defs[i] = d
    if d then
      local st = redis.call('HMGET', limits, s .. '\ntat', s .. '\npause')
      local pause = tonumber(st[2] or '0') or 0
      if pause > now then return 'at', s, pause, false end
      if d.max > 0 and tonumber(redis.call('HGET', use, s) or '0') >= d.max then return 'wait', s end
      if d.n > 0 and s ~= reserved then
        local interval = d.per / d.n
        local tat = math.max(tonumber(st[1] or '0') or 0, now)
        local earliest = tat - (d.burst - 1) * interval
        if earliest > now then
          redis.call('HSET', limits, s .. '\ntat', string.format('%.3f', tat + interval))
          return 'at', s, math.ceil(earliest), true
        end
        d.tat = tat
      end
    end
  end
  for i, s in ipairs(scopes) do
    local d = defs[i]
    if d then
      if d.max > 0 and redis.call('ZADD', leases, now + ttl, s .. '\n' .. holder) == 1 then
        redis.call('HINCRBY', use, s, 1)
      end
      if d.tat then redis.call('HSET', limits, s .. '\ntat', string.format('%.3f', d.tat + d.per / d.n)) end
    end
  end
  return nil
end

-- scope_park holds back QUEUED task id (hash tk, priority prio) for the
-- full concurrency limit of scope: it waits in limwait until a lease of the
-- scope is released (member "<scope>\n<9-prio>|<seq>|<ULID>").
local function scope_park(wait, use, tk, id, prio, scope)
  local seq = redis.call('HINCRBY', use, '#', 1)
  local m = scope .. '\n' .. string.format('%d', 9 - tonumber(prio)) .. '|' .. string.format('%016d', seq) .. '|' ..
    string.sub(id, -26)
  redis.call('ZADD', wait, 0, m)
  redis.call('HSET', tk, 'status', 'QUEUED', 'parked', m, 'throttled', scope)
end

-- scope_waiters returns up to n members of limwait of scope, best first.
local function scope_waiters(wait, scope, n) return waiters(wait, scope, '\n', n) end

-- Workflows: hash wf:<ULID> (store.WF* fields) holds, per node i, the plan
-- (k<i> "<kind>|<parent>|<role>", l<i> its steps or children, n<i> a chain
-- step's next step, y<i> and z<i>
-- a group's on_success and on_complete callbacks, t<i> and p<i> a task's
-- spec and payload) and the state (s<i> "<state>|<task id>", r<i> result,
-- w<i> why; a group's c<i> left, f<i> failed, x<i> first failure).

-- WF_WORD names a node's end state.
local WF_WORD = { S = 'SUCCEEDED', F = 'FAILED', X = 'CANCELLED', K = 'SKIPPED' }

-- wf_kids returns the node numbers of a comma-separated list.
local function wf_kids(v)
  local out = {}
  for n in string.gmatch(v or '', '%d+') do out[#out + 1] = tonumber(n) end
  return out
end

-- hmget_all is HMGET of fields (a list of any length) in chunks.
local function hmget_all(key, fields)
  local out = {}
  for i = 1, #fields, 900 do
    local v = redis.call('HMGET', key, unpack(fields, i, math.min(i + 899, #fields)))
    for j = 1, #v do out[i + j - 1] = v[j] end
  end
  return out
end

-- wf_about describes how what ("step 2 of 3", "child 7") ended: its task
-- id ("" for none), end state letter and why.
local function wf_about(what, tid, letter, why)
  local s = what
  if tid ~= '' then s = s .. ' (' .. tid .. ')' end
  s = s .. ' ' .. WF_WORD[letter]
  if why and why ~= '' then s = s .. ': ' .. why end
  return s
end

-- wf_outcomes returns the outcomes of nodes kids (ended) as a JSON array
-- of {"step", "id", "status", "result", "error"}.
local function wf_outcomes(wfk, kids)
  local fs = {}
  for _, c in ipairs(kids) do
    fs[#fs + 1], fs[#fs + 2], fs[#fs + 3] = 's' .. c, 'r' .. c, 'w' .. c
  end
  local v = hmget_all(wfk, fs)
  local parts = {}
  for j, c in ipairs(kids) do
    local st = v[3 * j - 2] or 'K|'
    local letter = string.sub(st, 1, 1)
    if not WF_WORD[letter] then letter = 'K' end
    parts[j] = '{"step":' .. c .. ',"id":"' .. string.sub(st, 3) .. '","status":"' .. WF_WORD[letter] ..
      '","result":' .. (v[3 * j - 1] or 'null') .. ',"error":' .. cjson.encode(v[3 * j] or '') .. '}'
  end
  return '[' .. table.concat(parts, ',') .. ']'
end

-- wf_children_done goes on from group g whose children have all ended:
-- its callbacks start (on_success only when every child succeeded, else
-- it is skipped, saying why) with the children's outcomes, or the group
-- ends with them as its result.
local function wf_children_done(wfk, g, cancel, acts)
  local v = redis.call('HMGET', wfk, 'l' .. g, 'y' .. g, 'z' .. g, 'f' .. g, 'x' .. g)
  local kids = wf_kids(v[1])
  local outs = wf_outcomes(wfk, kids)
  local failed = tonumber(v[4] or '0')
  local starts = {}
  if v[3] then starts[#starts + 1] = tonumber(v[3]) end
  if v[2] then
    if failed == 0 then
      starts[#starts + 1] = tonumber(v[2])
    else
      local skip = 'K|'
      if cancel then skip = 'X|' end
      redis.call('HSET', wfk, 's' .. v[2], skip, 'w' .. v[2], 'not run: ' .. (v[5] or ''))
    end
  end
  if #starts == 0 then
    if failed == 0 then
      acts[#acts + 1] = { 'end', g, 'S', outs, nil }
    else
      local letter = 'F'
      if cancel then letter = 'X' end
      acts[#acts + 1] = { 'end', g, letter, outs,
        failed .. ' of ' .. #kids .. ' children did not succeed; the first: ' .. (v[5] or '') }
    end
    return
  end
  redis.call('HSET', wfk, 'c' .. g, tostring(#starts))
  for _, cb in ipairs(starts) do acts[#acts + 1] = { 'start', cb, outs } end
end

-- wf_callbacks_done ends group g whose callbacks have ended: SUCCEEDED
-- when each succeeded (a skipped on_success did not), its result the
-- on_success callback's, else the on_complete one's.
local function wf_callbacks_done(wfk, g, cancel, acts)
  local v = redis.call('HMGET', wfk, 'y' .. g, 'z' .. g)
  local names = { 'on_success', 'on_complete' }
  local letter, result, why = 'S', nil, nil
  for j = 1, 2 do
    if v[j] then
      local s = redis.call('HMGET', wfk, 's' .. v[j], 'r' .. v[j], 'w' .. v[j])
      local st = s[1] or 'K|'
      local l = string.sub(st, 1, 1)
      if l == 'S' then
        if not result then result = s[2] end
      elseif letter == 'S' then
        letter = 'F'
        if l == 'X' or cancel then letter = 'X' end
        why = wf_about(names[j], string.sub(st, 3), l, s[3])
      end
    end
  end
  acts[#acts + 1] = { 'end', g, letter, result, why }
end

-- wf_flow runs the transitions of workflow hash wfk from acts, a list of
-- { 'start', node, previous result or nil } and { 'end', node, state
-- letter, result or nil, why or nil }, and of those they lead to, until
-- none is left (a loop, not recursion: a plan may be deep). A task step
-- starts as a birth entry of its band (KEYS[base + priority]) carrying the
-- workflow, the node and the previous result; a chain starts its first
-- step, a group all its children; a cancelled workflow starts nothing (the
-- node ends CANCELLED). An end goes up: a chain starts its next step with
-- the result, or ends (a step that did not succeed ends it, the steps after
-- it not run); a group counts its children, then its callbacks; the root's
-- end ends the workflow, which expires after retention (ms) — a succeeded
-- one is deleted at once when not keep. Returns the workflow's status when
-- it ended here.
local function wf_flow(wfk, base, queue, retention, keep, acts)
  local wfid = string.sub(wfk, -26)
  local wv = redis.call('HMGET', wfk, 'cancel', 'trace')
  local cancel, trace = wv[1] == '1', wv[2]
  local cache = {}
  local at = 1
  while acts[at] do
    local a = acts[at]
    at = at + 1
    local i = a[2]
    local k = redis.call('HMGET', wfk, 'k' .. i, 's' .. i)
    local kind, parent, role = string.match(k[1] or '', '^(%u)|([^|]*)|(.*)$')
    local st = k[2]
    if not kind then
      -- no such node: the workflow is gone
    elseif a[1] == 'start' then
      if st then
        -- started (or skipped) already
      elseif cancel then
        acts[#acts + 1] = { 'end', i, 'X', nil, 'the workflow was cancelled' }
      elseif kind == 'T' then
        local sp = redis.call('HMGET', wfk, 't' .. i, 'p' .. i)
        local typ, prio, max, timeout = string.match(sp[1] or '', '^(.*)\n(%d)\n(%d+)\n(%d+)$')
        local f = { 't', typ, 'p', sp[2], 'm', max, 'o', timeout, 'w', wfid, 'n', tostring(i) }
        if a[3] then f[#f + 1], f[#f + 2] = 'v', a[3] end
        if trace then f[#f + 1], f[#f + 2] = 'x', trace end
        local eid = redis.call('XADD', KEYS[base + tonumber(prio)], '*', unpack(f))
        redis.call('HSET', wfk, 's' .. i, 'A|' .. queue .. '-' .. born_ulid(prio, eid, cache))
      else
        local kids = wf_kids(redis.call('HGET', wfk, 'l' .. i))
        redis.call('HSET', wfk, 's' .. i, 'A|')
        if kind == 'C' then
          acts[#acts + 1] = { 'start', kids[1], a[3] }
        else
          redis.call('HSET', wfk, 'c' .. i, tostring(#kids), 'f' .. i, '0')
          for _, c in ipairs(kids) do acts[#acts + 1] = { 'start', c, a[3] } end
        end
      end
    elseif not st or string.byte(st, 1) == 65 then -- the end of a node not ended yet ('A')
      local letter, result, why = a[3], a[4], a[5]
      local tid = ''
      if st then tid = string.sub(st, 3) end
      local fs = { 's' .. i, letter .. '|' .. tid }
      if result then fs[#fs + 1], fs[#fs + 2] = 'r' .. i, result end
      if why and why ~= '' then fs[#fs + 1], fs[#fs + 2] = 'w' .. i, why end
      redis.call('HSET', wfk, unpack(fs))
      if parent == '-' then
        local status = 'SUCCEEDED'
        if cancel or letter == 'X' then status = 'CANCELLED' elseif letter ~= 'S' then status = 'FAILED' end
        local _, nowS = now_ms()
        redis.call('HSET', wfk, 'status', status, 'finished', nowS)
        if status == 'SUCCEEDED' and not keep then
          redis.call('DEL', wfk)
        else
          redis.call('PEXPIRE', wfk, retention)
        end
        return status
      end
      if string.byte(redis.call('HGET', wfk, 'k' .. parent) or '', 1) == 67 then -- 'C'
        -- (a chain's step names the next one: no list is read per step)
        local next = redis.call('HGET', wfk, 'n' .. i)
        if letter == 'S' and next then
          acts[#acts + 1] = { 'start', tonumber(next), result }
        elseif letter == 'S' then
          acts[#acts + 1] = { 'end', tonumber(parent), 'S', result, nil }
        else
          local kids = wf_kids(redis.call('HGET', wfk, 'l' .. parent))
          local pos = tonumber(role) + 1
          local about = wf_about('step ' .. pos .. ' of ' .. #kids, tid, letter, why)
          local skip = 'K|'
          if cancel then skip = 'X|' end
          for j = pos + 1, #kids do
            redis.call('HSET', wfk, 's' .. kids[j], skip, 'w' .. kids[j], 'not run: ' .. about)
          end
          local pl = 'F'
          if letter == 'X' then pl = 'X' end
          acts[#acts + 1] = { 'end', tonumber(parent), pl, nil, about }
        end
      else
        local left = redis.call('HINCRBY', wfk, 'c' .. parent, -1)
        if role == 'c' then
          if letter ~= 'S' and redis.call('HINCRBY', wfk, 'f' .. parent, 1) == 1 then
            redis.call('HSET', wfk, 'x' .. parent, wf_about('child ' .. i, tid, letter, why))
          end
          if left <= 0 then wf_children_done(wfk, tonumber(parent), cancel, acts) end
        elseif left <= 0 then
          wf_callbacks_done(wfk, tonumber(parent), cancel, acts)
        end
      end
    end
  end
  return nil
end

-- wf_task_end records in workflow hash wfk that task tid, step node (a
-- string), ended with status (SUCCEEDED, DEAD or CANCELLED; result and err
-- as recorded) and runs what follows (wf_flow; base, queue, retention and
-- keep as there). Only the step's own execution counts: a task run again
-- after its step ended (a requeued dead letter) changes nothing.
local function wf_task_end(wfk, base, queue, retention, keep, node, tid, status, result, err)
  if not node or redis.call('HGET', wfk, 's' .. node) ~= 'A|' .. tid then return end
  local letter = 'S'
  if status == 'DEAD' then letter = 'F' elseif status == 'CANCELLED' then letter = 'X' end
  if letter == 'S' then err = nil else result = nil end
  wf_flow(wfk, base, queue, retention, keep, { { 'end', tonumber(node), letter, result, err } })
end
