-- workflow_cancel.lua: cancel a workflow — no step of it starts any more.
--
-- KEYS[1]        the workflow hash
--
-- A RUNNING workflow gets its cancel flag: each step whose turn comes ends
-- CANCELLED unstarted (wf_flow in lib.lua). The caller then cancels the
-- tasks of its active steps (cancel.lua), whose ends finish it CANCELLED.
--
-- Returns { the workflow's status ("" when there is none), then, when
-- RUNNING, the ids of the tasks of its active steps }.

local wfk = KEYS[1]
local v = redis.call('HMGET', wfk, 'status', 'nodes')
if not v[1] then return { '' } end
if v[1] ~= 'RUNNING' then return { v[1] } end
redis.call('HSET', wfk, 'cancel', '1')
local fs = {}
for i = 0, tonumber(v[2] or '0') - 1 do fs[#fs + 1] = 's' .. i end
local out = { 'RUNNING' }
local states = hmget_all(wfk, fs)
for i = 1, #fs do
  local st = states[i]
  if st and string.byte(st, 1) == 65 and #st > 2 then out[#out + 1] = string.sub(st, 3) end
end
return out
