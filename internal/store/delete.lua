-- delete.lua: delete the records of finished tasks (Admin.Bulk's delete).
--
-- KEYS[1]        finished hash (packed records, by ULID)
-- KEYS[2..]      per task, in order: its task hash, then its steps hash
--                (Keys.Steps)
--
-- ARGV[1]        N; then the N tasks' ULIDs
--
-- A task is deleted when it has finished and is no dead letter: a packed
-- record of a SUCCEEDED or CANCELLED task goes from the finished hash; a
-- task hash of a SUCCEEDED, CANCELLED or discarded DEAD task (no
-- dead-letter entry) is deleted. Its steps hash goes with it. Its id stays
-- in the done stream until trimmed (listings skip a task without a record;
-- the count of listed tasks, info "done", is unchanged). Anything else is
-- left as it is.
--
-- Returns, per task, "OK" when deleted, else its status ("DEAD" for a
-- dead letter; "" when it has neither record nor hash: a task born as an
-- entry, QUEUED or RUNNING, or none).

local fin = KEYS[1]
local n = tonumber(ARGV[1])
local out = {}
for i = 1, n do
  local ulid, tk, sk = ARGV[1 + i], KEYS[2 * i], KEYS[2 * i + 1]
  local packed = record_status(redis.call('HGET', fin, ulid))
  local f = redis.call('HMGET', tk, 'status', 'dead_id', 'discarded')
  local status = packed or f[1] or ''
  if packed and (packed == 'SUCCEEDED' or packed == 'CANCELLED') then
    redis.call('HDEL', fin, ulid)
    redis.call('DEL', tk, sk)
    out[i] = 'OK'
  elseif not packed and (f[1] == 'SUCCEEDED' or f[1] == 'CANCELLED' or (f[1] == 'DEAD' and f[3] and not f[2])) then
    redis.call('DEL', tk, sk)
    out[i] = 'OK'
  else
    out[i] = status
  end
end
return out
