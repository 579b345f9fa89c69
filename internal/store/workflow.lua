-- workflow.lua: submit a workflow — its plan and its first tasks — in one
-- atomic step: all of it is there, or none.
--
-- KEYS[1]        the workflow hash
-- KEYS[2..11]    band streams of priority 0..9
-- KEYS[12]       schedule zset (for the depth bound)
-- KEYS[13]       gwait zset (for the depth bound)
-- KEYS[14]       the idempotency record of the submission's key (any key
--                of the queue when there is none)
-- KEYS[15]       info hash (fields b0..b9, for the depth bound)
-- KEYS[16]       workflow index zset (ULID by creation time, ms)
--
-- ARGV[1]        the queue's name (a task's id is "<queue>-<ULID>")
-- ARGV[2]        max depth (queued + scheduled + running; 0 = unbounded)
-- ARGV[3]        how many tasks the plan has
-- ARGV[4]        how many nodes the plan has
-- ARGV[5]        retention of finished workflows, ms
-- ARGV[6]        idempotency window, ms ("0": the submission has no key)
-- ARGV[7]        the request's fingerprint (compared on a replay)
-- ARGV[8..]      the plan: field, value pairs of the workflow hash (per
--                node its kind, parent and role; steps or children;
--                callbacks; a task's spec and payload: store.WF* fields)
--
-- The plan's root (node 0) starts at once (wf_flow in lib.lua): the tasks
-- it makes ready become entries of their bands. The depth bound counts
-- every task of the plan: a workflow is refused whole when the queue
-- cannot take all of them.
--
-- With an idempotency key, the record "<workflow ULID> <fingerprint>"
-- lives for the window from the submission: a submission that finds it
-- writes nothing and answers the workflow it names.
--
-- Returns { 1, created ms }, or { 0 } when the workflow exists already (its
-- id is taken), or { -2 } when the queue is full (nothing written), or
-- { 2, ULID } for a replay of the key's request (same fingerprint), or
-- { -1, ULID } when the key was used for another request.

local wfk = KEYS[1]
local window = ARGV[6]
if window ~= '0' then
  local v = redis.call('GET', KEYS[14])
  if v then
    local ulid, fp = string.match(v, '^(%S+) (%S+)$')
    if fp == ARGV[7] then return { 2, ulid } end
    return { -1, ulid or '' }
  end
end
if redis.call('EXISTS', wfk) == 1 then return { 0 } end
local maxDepth, tasks = tonumber(ARGV[2]), tonumber(ARGV[3])
if maxDepth > 0 then
  if queue_depth(KEYS[15], 2, KEYS[12], KEYS[13]) + tasks > maxDepth then return { -2 } end
end
local now, nowS = now_ms()
redis.call('HSET', wfk, 'status', 'RUNNING', 'created', nowS, 'nodes', ARGV[4], 'tasks', ARGV[3])
redis.call('ZADD', KEYS[16], nowS, string.sub(wfk, -26))
if window ~= '0' then
  redis.call('SET', KEYS[14], string.sub(wfk, -26) .. ' ' .. ARGV[7], 'PX', window)
end
local i = 8
while i <= #ARGV do
  local j = math.min(i + 999, #ARGV)
  redis.call('HSET', wfk, unpack(ARGV, i, j))
  i = j + 1
end
wf_flow(wfk, 2, ARGV[1], ARGV[5], true, { { 'start', 0, nil } })
return { 1, now }
