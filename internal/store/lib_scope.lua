-- lib_scope.lua: scoped limits (a task type's, a limit key's); part of the
-- store's library (lib.go).

-- Scoped limits (a task type's, a limit key's): limscope hash field <scope>
-- = "<max running>/<rate n>/<rate period ms>/<burst>", then "/<letter>" for
-- what a start does when the concurrency limit is full (store.ScopeDef's
-- OnFull: none or "q" wait, "r" cancel the oldest running, "n" cancel
-- this newest, "w" replace the waiting ones); limits hash fields
-- <scope>\ntat its GCRA state (ms), <scope>\npause no start before (ms);
-- limuse hash: leases live per scope; limlease zset: member
-- "<scope>\n<ULID>|<run>", score expiry.

-- scope_def returns the limit of scope as {max, n, per, burst, full} (a
-- limit key with none of its own takes "k:*"'s), or nil.
local function scope_def(defs, scope)
  local v = redis.call('HGET', defs, scope)
  if not v and string.sub(scope, 1, 2) == 'k:' then v = redis.call('HGET', defs, 'k:*') end
  if not v then return nil end
  local m, n, per, b, full = string.match(v, '^(%d+)/(%d+)/(%d+)/(%d+)/?(%a?)$')
  if not m then return nil end
  return { max = tonumber(m), n = tonumber(n), per = tonumber(per), burst = math.max(1, tonumber(b)), full = full }
end

-- scope_sweep deletes up to 100 expired scoped leases, counting them out
-- of limuse. Returns the scopes they were of (a set).
local function scope_sweep(use, leases, now)
  local freed = {}
  local ex = redis.call('ZRANGEBYSCORE', leases, '-inf', now, 'LIMIT', 0, 100)
  for _, m in ipairs(ex) do
    local scope = string.match(m, '^(.*)\n')
    if scope then
      freed[scope] = true
      if redis.call('HINCRBY', use, scope, -1) <= 0 then redis.call('HDEL', use, scope) end
    end
  end
  if #ex > 0 then redis.call('ZREM', leases, unpack(ex)) end
  return freed
end

-- scope_take checks the scoped limits of a task (its scopes, a list) for
-- a start now, and when they all have room takes it: a lease per
-- concurrency limit ("<scope>\n<holder>", holder "<ULID>|<run>", expiring
-- after ttl ms) and a token
-- per rate limit, except that of scope reserved (a start it reserved when
-- it was held back). Returns nil then; else 'wait', scope, its OnFull
-- letter (a concurrency limit is full) or 'at', scope, ms, rate (no start
-- before ms: a pause,
-- or with rate true the rate limit, whose start at ms is reserved here).
local function scope_take(sdefs, limits, use, leases, scopes, holder, now, ttl, reserved)
  local defs = {}
  for i, s in ipairs(scopes) do
    local d = scope_def(sdefs, s)
    defs[i] = d
    if d then
      local st = redis.call('HMGET', limits, s .. '\ntat', s .. '\npause')
      local pause = tonumber(st[2] or '0') or 0
      if pause > now then return 'at', s, pause, false end
      if d.max > 0 and tonumber(redis.call('HGET', use, s) or '0') >= d.max then return 'wait', s, d.full end
      if d.n > 0 and s ~= reserved then
        local interval = d.per / d.n
        local tat = math.max(tonumber(st[1] or '0') or 0, now)
        local earliest = tat - (d.burst - 1) * interval
        if earliest > now then
          redis.call('HSET', limits, s .. '\ntat', string.format('%.3f', tat + interval))
          return 'at', s, math.ceil(earliest), true
        end
        d.tat = tat
      end
    end
  end
  for i, s in ipairs(scopes) do
    local d = defs[i]
    if d then
      if d.max > 0 and redis.call('ZADD', leases, now + ttl, s .. '\n' .. holder) == 1 then
        redis.call('HINCRBY', use, s, 1)
      end
      if d.tat then redis.call('HSET', limits, s .. '\ntat', string.format('%.3f', d.tat + d.per / d.n)) end
    end
  end
  return nil
end

-- scope_park holds back QUEUED task id (hash tk, priority prio) for the
-- full concurrency limit of scope: it waits in limwait until a lease of the
-- scope is released (member "<scope>\n<9-prio>|<seq>|<ULID>").
local function scope_park(wait, use, tk, id, prio, scope)
  local seq = redis.call('HINCRBY', use, '#', 1)
  local m = scope .. '\n' .. string.format('%d', 9 - tonumber(prio)) .. '|' .. string.format('%016d', seq) .. '|' ..
    string.sub(id, -26)
  redis.call('ZADD', wait, 0, m)
  redis.call('HSET', tk, 'status', 'QUEUED', 'parked', m, 'throttled', scope)
end

-- scope_cancel_oldest requests the cancellation of the oldest run holding
-- a lease of scope (leases: limlease; runs: the run hash), as cancel.lua
-- does a running task's, publishing its id (queue .. "-" .. ULID) on
-- channel cancels — unless one of them is being cancelled already (its
-- end frees the room). Returns the id, or nil.
local function scope_cancel_oldest(leases, runs, scope, queue, cancels)
  local prefix = scope .. '\n'
  local oldest, oldestUlid
  for _, m in ipairs(redis.call('ZRANGE', leases, 0, -1)) do
    if string.sub(m, 1, #prefix) == prefix then
      local ulid, run = string.match(string.sub(m, #prefix + 1), '^(.*)|(%d+)$')
      local rs = ulid and run_state(redis.call('HGET', runs, ulid))
      if rs and rs.run == run then
        if rs.cancel == '1' then return nil end
        if not oldest or tonumber(rs.started) < tonumber(oldest.started) then oldest, oldestUlid = rs, ulid end
      end
    end
  end
  if not oldest then return nil end
  oldest.cancel = '1'
  redis.call('HSET', runs, oldestUlid, run_value(oldest))
  local id = queue .. '-' .. oldestUlid
  redis.call('PUBLISH', cancels, id)
  return id
end

-- scope_waiters returns up to n members of limwait of scope, best first.
local function scope_waiters(wait, scope, n) return waiters(wait, scope, '\n', n) end

