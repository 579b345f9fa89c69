-- trim.lua: take finished tasks out of a queue — past the retention or
-- beyond its caps — records with them.
--
-- KEYS[1]        done stream (finished tasks: entries "i" = their ids)
-- KEYS[2]        dead-letter stream
-- KEYS[3]        finished hash (packed records, by ULID)
-- KEYS[4]        info hash (field "done": the tasks the done stream lists)
-- KEYS[4+j]      task hashes, referenced below (each ends with its ULID)
--
-- ARGV[1]        N; then per item: "d", a done entry's id and the number m
--                of its tasks, whose task hashes are the next m keys; or
--                "x", a dead-letter entry's id, whose task hash is the next
--                key
--
-- The caller read the items from the oldest end of the done stream (past
-- the retention, or beyond the cap) or of the dead-letter stream (beyond
-- its cap). Each is removed; its tasks' records too when it still stands
-- for them: a finished (SUCCEEDED, CANCELLED, discarded DEAD) task for a
-- done entry, a DEAD task dead-lettered under that entry for a dead-letter
-- entry (a task requeued since, or running again, keeps its record).
--
-- Returns the number of records deleted.

local done, dlq, fin, info = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local n = tonumber(ARGV[1])
local deleted, k, a = 0, 5, 2
for _ = 1, n do
  local kind, ref = ARGV[a], ARGV[a + 1]
  if kind == 'd' then
    local m = tonumber(ARGV[a + 2])
    a = a + 3
    for _ = 1, m do
      local tk = KEYS[k]
      k = k + 1
      if redis.call('HDEL', fin, string.sub(tk, -26)) == 1 then
        deleted = deleted + 1
      else
        local f = redis.call('HMGET', tk, 'status', 'dead_id', 'discarded')
        if f[1] == 'SUCCEEDED' or f[1] == 'CANCELLED' or (f[1] == 'DEAD' and f[3] and not f[2]) then
          redis.call('DEL', tk)
          deleted = deleted + 1
        end
      end
    end
    if redis.call('XDEL', done, ref) == 1 and m > 0 then redis.call('HINCRBY', info, 'done', string.format('%d', -m)) end
  else
    a = a + 2
    local tk = KEYS[k]
    k = k + 1
    redis.call('XDEL', dlq, ref)
    local f = redis.call('HMGET', tk, 'status', 'dead_id')
    if f[1] == 'DEAD' and f[2] == ref then
      redis.call('DEL', tk)
      deleted = deleted + 1
    end
  end
end
return deleted
