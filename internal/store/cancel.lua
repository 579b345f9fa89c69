-- cancel.lua: cancel one task.
--
-- KEYS[1]        info hash
-- KEYS[2]        schedule zset
-- KEYS[3]        done stream (finished tasks: entries "i" = their ids)
-- KEYS[4]        run hash (running tasks' state, by ULID)
-- KEYS[5]        the task hash
-- KEYS[6]        finished hash (packed records, by ULID)
-- KEYS[7]        the band stream of its birth entry (any band when the id
--                names no entry)
-- KEYS[8]        gwait zset (tasks waiting for their group's turn)
-- KEYS[9]        limwait zset (tasks a full scoped concurrency limit holds back)
-- KEYS[10..19]   band streams of priority 0..9 (a workflow's next steps)
-- KEYS[20]       the workflow hash of the task's workflow, when it is a
--                step of one (else any key of the queue)
-- KEYS[21]       gcount hash (per group: admitted entries not started)
-- KEYS[22]       suspended zset (Keys.Suspended)
-- KEYS[23]       ohold hash (per order key: the task in flight)
-- KEYS[24]       oline hash (tasks waiting for their order keys)
-- KEYS[25]       wakeup stream (the scheduler re-reads the earliest due time)
-- KEYS[26]       oindex hash (the ordered tasks without a hash)
--
-- ARGV[1]        task id
-- ARGV[2]        events channel
-- ARGV[3]        cancels channel (workers listen)
-- ARGV[4]        retention of finished tasks, ms
-- ARGV[5]        consumer group
-- ARGV[6]        its birth entry's id ("" when the id names no entry)
-- ARGV[7]        its birth entry's band
-- ARGV[8]        its ULID
-- ARGV[9]        the ULID of the workflow KEYS[20] is ("" for none)
-- ARGV[10]       the queue's name
--
-- RUNNING (a Run field) -> the cancellation is recorded in the Run field and
-- published on the cancels channel; the worker running it cancels its
-- handler, and the task ends CANCELLED. A task born as an entry and still
-- only that -> when a worker has claimed it (its entry pending: an
-- implicit first run, see first_runs, or a start on its way), as RUNNING:
-- a Run field of run 1 with the cancellation requested; else (QUEUED) a
-- CANCELLED hash made from the entry, and the entry is deleted. A QUEUED (with a hash) or SCHEDULED
-- task -> CANCELLED at once: one waiting for its group's turn leaves gwait,
-- one a scoped limit holds back leaves limwait, and one in a band loses
-- the entry it was written again as (its hash's "entry", lib.lua's readd)
-- — deleted unless a worker has claimed it (pending: that worker's start
-- skips it, acknowledging and deleting it); an entry admitted under its
-- group's window and deleted here is counted out of gcount, and the
-- group's best waiters for the room it has are returned (a task its order
-- key passed to has its entry's id in ohold: lib_order.lua's order_entry). A
-- task of an order key leaves it: a waiter leaves oline, the key's holder
-- passes it to the next waiter (lib_order.lua's order_leave). An ordered
-- task without a hash (lib_order.lua's oindex) is found there: waiting in
-- its key's line, it gets its hash from its oline value first; holding its
-- key, its entry is as a born task's. Anything else is
-- left as it is. A cancelled task expires after the retention and is
-- listed in the done stream.
--
-- A step of a workflow ends its step there in the same call (wf_task_end:
-- the steps that follow it start, or end unstarted): a task about to be
-- cancelled whose workflow is not the one in KEYS[20] changes nothing and
-- answers { 'WF', its workflow's ULID } — call again with that workflow's
-- hash.
--
-- Returns { the task's status after the call ("" when there is no such
-- task) } or, when this call cancelled a QUEUED or SCHEDULED task,
-- { 'CANCELLED', its type, the gwait members to move into the bands...
-- (gpromote.lua) }.

local info, schedule, done, runs, tk, fin, band = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local id, channel, cancels, retention = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local group, eid, prio, ulid = ARGV[5], ARGV[6], ARGV[7], ARGV[8]
local ohold, oline, oindex = KEYS[23], KEYS[24], KEYS[26]

local rs = run_state(redis.call('HGET', runs, ulid))
if rs then
  if rs.cancel ~= '1' then
    rs.cancel = '1'
    redis.call('HSET', runs, ulid, run_value(rs))
    redis.call('PUBLISH', cancels, id)
  end
  return {'RUNNING'}
end
local recorded = record_status(redis.call('HGET', fin, ulid))
if recorded then return {recorded} end

local f = redis.call('HMGET', tk, 'status', 'type', 'attempt', 'prio', 'gwait', 'parked', 'wf', 'wstep', 'entry', 'okey')
f[3] = f[3] or '0'
local status = f[1]
local born
if not status then
  -- an ordered task without a hash: its record is its oline value, or its entry
  local where, lprio, okey, m, v = order_light_find(ohold, oline, oindex, ulid)
  if where == 'wait' then
    f[2], f[4], f[10] = order_light_hash(tk, okey, m, v), lprio, okey
    status = 'QUEUED'
  elseif where == 'held' and m and m ~= '' then
    band, eid, prio = KEYS[10 + tonumber(lprio)], m, lprio
  end
end
if not status then
  if eid == '' then return {''} end
  born = entry_fields(band, eid)
  if not born then return {''} end
  status = 'QUEUED'
  f[7], f[8] = born['w'], born['n']
end
if status ~= 'QUEUED' and status ~= 'SCHEDULED' then return {status} end
if f[7] and f[7] ~= ARGV[9] then return {'WF', f[7]} end
local now, nowS = now_ms()
if born then
  local pend = redis.pcall('XPENDING', band, group, eid, eid, 1)
  if type(pend) == 'table' and not pend.err and #pend > 0 then
    -- claimed: running as an implicit first run (StartImplicit), or about
    -- to start. Its cancellation is requested as a running task's, in the
    -- Run field of its run 1 (started at its delivery, by its consumer):
    -- the worker running it stops it; a start of it ends it CANCELLED.
    local started = string.format('%d', now - tonumber(pend[1][3]))
    redis.call('HSET', runs, '~', run_pad(), ulid, '1|1|0|' .. started .. '|1|' .. pend[1][2])
    redis.call('PUBLISH', cancels, id)
    return {'RUNNING'}
  end
  f[2] = copy_spec(tk, band, eid, prio)
  f[4] = prio
  redis.call('XDEL', band, eid)
end

if status == 'SCHEDULED' then
  redis.call('ZREM', schedule, id)
  redis.call('ZREM', KEYS[22], id)
end
if f[5] then
  redis.call('ZREM', KEYS[8], f[5])
  redis.call('HDEL', tk, 'gwait')
end
if f[6] then
  redis.call('ZREM', KEYS[9], f[6])
  redis.call('HDEL', tk, 'parked')
end
local waiters = NONE
-- a task its order key passed to has its entry's id in ohold, not in its hash
if not f[9] and f[10] and status == 'QUEUED' then f[9] = order_entry(ohold, f[10], ulid) end
if f[9] then
  -- its entry written again (a give-back, a retry or a delayed task
  -- promoted, a requeue, a group's or a limit's turn): the entry it waits
  -- as, unless it waits in gwait or limwait (then that entry is gone)
  if status == 'QUEUED' and not f[5] and not f[6] then
    local eband = KEYS[10 + tonumber(f[4])]
    local m = entry_fields(eband, f[9])
    local pend = redis.pcall('XPENDING', eband, group, f[9], f[9], 1)
    if m and m['i'] == id and not (type(pend) == 'table' and not pend.err and #pend > 0) then
      redis.call('XDEL', eband, f[9])
      if m['f'] then
        local room = group_left(KEYS[21], m['f'])
        if room > 0 then waiters = group_waiters(KEYS[8], m['f'], room) end
      end
    end
  end
  redis.call('HDEL', tk, 'entry')
end
if order_leave(ohold, oline, oindex, schedule, ARGV[10], tk, ulid, now, 10) then
  redis.call('XADD', KEYS[25], 'MAXLEN', '1', '*', 'w', '1')
end
redis.call('HSET', tk, 'status', 'CANCELLED', 'finished', nowS, 'error', 'cancelled')
redis.call('PEXPIRE', tk, retention)
list_done(info, done, {id})
redis.call('HINCRBY', info, 'cancelled', 1)
redis.call('PUBLISH', channel, id .. '\tCANCELLED\t' .. f[2] .. '\t' .. f[3] .. '\t' .. f[4] .. '\t' .. nowS)
order_publish(channel, nowS)
if f[7] then wf_task_end(KEYS[20], 10, ARGV[10], retention, true, f[8], id, 'CANCELLED', nil, 'cancelled') end
local out = {'CANCELLED', f[2] or ''}
for _, w in ipairs(waiters) do out[#out + 1] = w end
return out
