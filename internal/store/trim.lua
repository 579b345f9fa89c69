-- trim.lua: take finished tasks out of a queue — past the retention or
-- beyond its caps — records with them.
--
-- KEYS[1]        done zset (finished task ids by finish time)
-- KEYS[2]        dead-letter stream
-- KEYS[3]        finished hash (packed records, by ULID)
-- KEYS[3+i]      the task hash of item i (1..N; it ends with the task's ULID)
--
-- ARGV[1]        N; then 2 values per item: "d" (a task id of the done
--                zset) or "x" (an entry of the dead-letter stream), and the
--                task id or the entry id
--
-- The caller read the items from the oldest end of the done zset (past
-- the retention, or beyond the cap) or of the dead-letter stream (beyond
-- its cap). Each is removed; its task's record too when it still stands
-- for it: a finished (SUCCEEDED, CANCELLED, discarded DEAD) task for a done
-- entry, a DEAD task dead-lettered under that entry for a dead-letter entry
-- (a task requeued since, or running again, keeps its record).
--
-- Returns the number of records deleted.

local done, dlq, fin = KEYS[1], KEYS[2], KEYS[3]
local n = tonumber(ARGV[1])
local deleted = 0
for i = 1, n do
  local kind, ref = ARGV[i * 2], ARGV[i * 2 + 1]
  local tk = KEYS[3 + i]
  local ulid = string.sub(tk, -26)
  if kind == 'd' then
    redis.call('ZREM', done, ref)
    if redis.call('HDEL', fin, ulid) == 1 then
      deleted = deleted + 1
    else
      local f = redis.call('HMGET', tk, 'status', 'dead_id', 'discarded')
      if f[1] == 'SUCCEEDED' or f[1] == 'CANCELLED' or (f[1] == 'DEAD' and f[3] and not f[2]) then
        redis.call('DEL', tk)
        deleted = deleted + 1
      end
    end
  else
    redis.call('XDEL', dlq, ref)
    local f = redis.call('HMGET', tk, 'status', 'dead_id')
    if f[1] == 'DEAD' and f[2] == ref then
      redis.call('DEL', tk)
      deleted = deleted + 1
    end
  end
end
return deleted
