-- trim.lua: take the oldest finished tasks out of a queue beyond its caps,
-- records with them.
--
-- KEYS[1]        done stream
-- KEYS[2]        dead-letter stream
-- KEYS[3+2i]     the task hash of item i (0..N-1), KEYS[4+2i] its packed
--                record key
--
-- ARGV[1]        N; then 2 values per item: "d" (an entry of the done
--                stream) or "x" (of the dead-letter stream), the entry id
--
-- The caller read the items from the oldest end of each stream, beyond the
-- stream's cap. Each entry is deleted; its task's record too when the entry
-- still stands for it: a finished (SUCCEEDED, CANCELLED, discarded DEAD)
-- task for a done entry, a DEAD task dead-lettered under that entry for a
-- dead-letter entry (a task requeued since, or running again, keeps its
-- record).
--
-- Returns the number of records deleted.

local done, dlq = KEYS[1], KEYS[2]
local n = tonumber(ARGV[1])
local deleted = 0
for i = 0, n - 1 do
  local kind, eid = ARGV[2 + i * 2], ARGV[3 + i * 2]
  local tk, rk = KEYS[3 + 2 * i], KEYS[4 + 2 * i]
  if kind == 'd' then
    redis.call('XDEL', done, eid)
    if record_status(redis.call('GET', rk)) then
      redis.call('DEL', rk)
      deleted = deleted + 1
    else
      local f = redis.call('HMGET', tk, 'status', 'dead_id', 'discarded')
      if f[1] == 'SUCCEEDED' or f[1] == 'CANCELLED' or (f[1] == 'DEAD' and f[3] and not f[2]) then
        redis.call('DEL', tk)
        deleted = deleted + 1
      end
    end
  else
    redis.call('XDEL', dlq, eid)
    local f = redis.call('HMGET', tk, 'status', 'dead_id')
    if f[1] == 'DEAD' and f[2] == eid then
      redis.call('DEL', tk)
      deleted = deleted + 1
    end
  end
end
return deleted
