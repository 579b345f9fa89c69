-- drop_sweep.lua: delete the keys of single tasks of a deleted queue (the
-- second step of Client.DeleteQueue, after drop.lua), among the keys a
-- SCAN of the queue's prefix found. A key made after the deletion — by a
-- submission to the queue, which makes it again — is kept.
--
-- KEYS[1]        schedule zset (of the queue as it is again, if it is)
-- KEYS[2]        run hash (likewise)
-- KEYS[3..]      candidate keys: task hashes ("...:task:<ULID>"),
--                idempotency records ("...:idem:<sha>") and operation
--                records ("...:once:<sha>"), workflows ("...:wf:<ULID>")
--                and step records ("...:steps:<ULID>"); any other key is
--                left alone
--
-- ARGV[1]        the deletion's Redis time (Unix ms), from drop.lua
-- ARGV[2]        the queue's task id prefix ("<queue>-")
--
-- A task hash is deleted when it was created at or before the deletion
-- (or says nothing of when) and is neither SCHEDULED nor RUNNING in the
-- queue as it is now; an idempotency record when the task it names is of
-- before the deletion: a birth entry's time (a "=<band>:<ms>-<seq>"
-- reference) at or before it, or a random id that is neither scheduled nor
-- running now; a workflow when it was created at or before the deletion;
-- a task's step records when its ULID's time is at or before the deletion
-- and it is neither SCHEDULED nor RUNNING now. Operation records are
-- deleted.
--
-- Returns the number of keys deleted.

local schedule, run = KEYS[1], KEYS[2]
local dropped, prefix = tonumber(ARGV[1]), ARGV[2]
local deleted = 0

local B32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

-- ulid_ms is the time part of a ULID (Unix ms), nil when it is not one.
local function ulid_ms(u)
  if #u ~= 26 then return nil end
  local n = 0
  for i = 1, 10 do
    local d = string.find(B32, string.sub(u, i, i), 1, true)
    if not d then return nil end
    n = n * 32 + (d - 1)
  end
  return n
end

local function live(ulid)
  return redis.call('HEXISTS', run, ulid) == 1 or redis.call('ZSCORE', schedule, prefix .. ulid) ~= false
end

for i = 3, #KEYS do
  local k = KEYS[i]
  local kind, rest = string.match(k, ':(%a+):([^:]+)$')
  local del = false
  if kind == 'task' then
    local created = tonumber(redis.call('HGET', k, 'created') or '0') or 0
    del = created <= dropped and not live(rest)
  elseif kind == 'idem' then
    local v = redis.call('GET', k)
    if v then
      local ref = string.match(v, '^(%S+)')
      local ms = string.match(ref, '^=%d+:(%d+)%-')
      if ms then
        del = tonumber(ms) <= dropped
      else
        del = not live(string.sub(ref, -26))
      end
    end
  elseif kind == 'once' then
    del = true
  elseif kind == 'steps' then
    local ms = ulid_ms(rest)
    del = ms ~= nil and ms <= dropped and not live(rest)
  elseif kind == 'wf' then
    del = (tonumber(redis.call('HGET', k, 'created') or '0') or 0) <= dropped
  end
  if del then deleted = deleted + redis.call('DEL', k) end
end
return deleted
