-- dlq.lua: requeue or discard DEAD tasks, in one batch.
--
-- KEYS[1]        info hash
-- KEYS[2]        dead-letter stream
-- KEYS[3]        done stream (finished tasks: entries "i" = their ids)
-- KEYS[4..13]    band streams of priority 0..9
-- KEYS[14]       gwait zset (tasks waiting for their group's turn)
-- KEYS[15]       gcount hash (per group: admitted entries not started)
-- KEYS[16]       ohold hash (per order key: the task in flight)
-- KEYS[17]       oline hash (tasks waiting for their order keys)
-- KEYS[18..]     the task hash of each item, in order
--
-- ARGV[1]        "requeue" or "discard"
-- ARGV[2]        events channel
-- ARGV[3]        retention of finished tasks, ms
-- ARGV[4]        N; then the N task ids
--
-- Each item must be a dead letter: DEAD and not discarded already (a
-- discarded task is DEAD, "discarded", no "dead_id": trim.lua's test).
-- requeue: DEAD -> QUEUED with attempt and crash counts reset and its history
--          kept; its dead-letter entry is removed (a task with a group
--          enters under its group's window, or waits in gwait; one of an
--          order key enters it anew, at the tail: order_enter).
-- discard: its dead-letter entry is removed; the task stays DEAD, marked
--          "discarded", is listed in the done stream and expires after the
--          retention.
-- Other items are left alone: a task discarded already is neither
-- requeued (it left the dead-letter stream) nor listed again.
--
-- Returns one code per item: 1 done, 0 not a dead letter (not DEAD, gone,
-- or a requeue of a task discarded already), 2 discard of a task discarded
-- already (nothing done).

local info, dlq, done = KEYS[1], KEYS[2], KEYS[3]
local action, channel, retention = ARGV[1], ARGV[2], ARGV[3]
local n = tonumber(ARGV[4])

local now, nowS = now_ms()

local out, events, moved = {}, {}, 0
for i = 0, n - 1 do
  local id, tk = ARGV[5 + i], KEYS[18 + i]
  local f = redis.call('HMGET', tk, 'status', 'dead_id', 'prio', 'type', 'group', 'discarded')
  local res = 0
  if f[1] == 'DEAD' and f[6] and not f[2] then
    if action == 'discard' then res = 2 end
  elseif f[1] == 'DEAD' then
    if f[2] then redis.call('XDEL', dlq, f[2]) end
    if action == 'requeue' then
      redis.call('HSET', tk, 'status', 'QUEUED', 'attempt', '0', 'crashes', '0', 'cancel', '0', 'requeued', nowS)
      redis.call('HDEL', tk, 'dead_id', 'finished', 'discarded')
      redis.call('PERSIST', tk)
      local okey = redis.call('HGET', tk, 'okey')
      local line
      if okey then
        local s = redis.call('HMGET', tk, 'type', 'payload', 'max_att', 'timeout', 'created', 'idem', 'sched', 'tick',
          'lkey', 'wf', 'wstep', 'prev', 'trace', 'parent')
        line = order_line(f[3], f[5] and '1' or '0', '0', s, 0)
      end
      if okey and not order_enter(KEYS[16], KEYS[17], tk, string.sub(id, -26), okey, 0, line) then
        -- waits for its key's turn
      elseif f[5] then
        admit(KEYS[4 + tonumber(f[3])], tk, id, f[5], f[3], KEYS[14], KEYS[15])
      else
        readd(KEYS[4 + tonumber(f[3])], tk, id)
      end
      events[#events + 1] = id .. '\tQUEUED\t' .. f[4] .. '\t0\t' .. f[3] .. '\t' .. nowS
      moved = moved + 1
    else
      redis.call('HSET', tk, 'discarded', nowS)
      redis.call('HDEL', tk, 'dead_id')
      redis.call('PEXPIRE', tk, retention)
      list_done(info, done, {id})
    end
    res = 1
  end
  out[#out + 1] = res
end
if moved > 0 then
  redis.call('HINCRBY', info, 'requeued', moved)
  redis.call('PUBLISH', channel, table.concat(events, '\n'))
end
return out
