-- lib_workflow.lua: workflows; part of the store's library (lib.go).

-- Workflows: hash wf:<ULID> (store.WF* fields) holds, per node i, the plan
-- (k<i> "<kind>|<parent>|<role>", l<i> its steps or children, n<i> a chain
-- step's next step, y<i> and z<i> a parallel step's on_success and
-- on_complete callbacks, t<i> and p<i> a task's spec and payload) and the
-- state (s<i> "<state>|<task id>", r<i> result, w<i> why; a parallel
-- step's c<i> left, f<i> failed, x<i> first failure).

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
    parts[j] = '{"node":' .. c .. ',"id":"' .. string.sub(st, 3) .. '","status":"' .. WF_WORD[letter] ..
      '","result":' .. (v[3 * j - 1] or 'null') .. ',"error":' .. cjson.encode(v[3 * j] or '') .. '}'
  end
  return '[' .. table.concat(parts, ',') .. ']'
end

-- wf_children_done goes on from parallel step g whose children have all
-- ended: its callbacks start (on_success only when every child succeeded,
-- else it is skipped, saying why) with the children's outcomes, or the
-- parallel step ends with them as its result.
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

-- wf_callbacks_done ends parallel step g whose callbacks have ended:
-- SUCCEEDED when each succeeded (a skipped on_success did not), its result
-- the on_success callback's, else the on_complete one's.
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
-- step, a parallel step all its children; a cancelled workflow starts
-- nothing (the node ends CANCELLED). An end goes up: a chain starts its
-- next step with the result, or ends (a step that did not succeed ends it,
-- the steps after it not run); a parallel step counts its children, then
-- its callbacks; the root's end ends the workflow, which expires after
-- retention (ms) — a succeeded one is deleted at once when not keep.
-- Returns the workflow's status when it ended here.
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
          local about = wf_about('node ' .. pos .. ' of ' .. #kids, tid, letter, why)
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
