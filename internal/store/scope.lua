-- scope.lua: the leases and waiters of a queue's scoped limits (a task
-- type's, a limit key's; see lib.lua's scope_take, which start.lua runs).
--
-- KEYS[1]        limits hash (the scoped limits' rate state and pauses)
-- KEYS[2]        limuse hash (leases live per scope)
-- KEYS[3]        limlease zset (member "<scope>\n<ULID>|<run>", score expiry)
-- KEYS[4]        limwait zset (member "<scope>\n<9-prio>|<seq>|<ULID>")
-- KEYS[5]        gwait zset (tasks waiting for their group's turn)
-- KEYS[6]        gcount hash (per group: admitted entries not started)
-- KEYS[7]        limscope hash (the scoped limits)
-- KEYS[8..17]    band streams of priority 0..9
-- KEYS[18..]     unpark: the task hash of each member, in order
--
-- ARGV[1]        op: "renew", "release", "unpark", "sweep", "prune" or "pause"
-- ARGV[2]        renew: lease lifetime, ms; pause: its length, ms;
--                unpark: the queue's name; sweep: the most scopes to visit;
--                prune: the HSCAN cursor of the limits hash ("0" to start)
-- ARGV[3..]      renew, release: lease names "<scope>\n<ULID>|<run>"; unpark:
--                limwait members; pause: scopes; sweep: the scope to
--                start after ("" = the first)
--
-- renew: moves the expiry of the live ones. Returns the number renewed.
-- release: deletes them (counting them out of limuse). Returns the best
--   waiters of their scopes, as many as each has room for now.
-- unpark: each member still waiting whose scope has room goes back to the
--   tail of its band, QUEUED (a task of a group under its group's window,
--   or to gwait). Returns the number moved.
-- sweep: deletes expired leases, then walks limwait scope by scope from
--   ARGV[3] and returns { the scope to go on after ("" = done), the best
--   waiters of scopes with room... } (a scope without a limit any more has
--   room for all).
-- prune: deletes, from one HSCAN step of the limits hash, the rate states
--   ("<scope>\ntat") and pauses ("<scope>\npause") that are past (a tat
--   at or before now means what no tat means; a limit of each key leaves
--   one per key seen). Returns { the next cursor ("0": a whole pass done),
--   fields deleted }.
-- pause: no task under those scopes starts before now + ARGV[2]. Returns 1.

local limits, use, leases, wait, gwait, gcount, sdefs = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local op = ARGV[1]
local now = now_ms()

-- room returns how many more tasks of scope may run now (100 when
-- unlimited: the most moved in one call).
local function room(scope)
  local d = scope_def(sdefs, scope)
  if not d or d.max == 0 then return 100 end
  return math.max(0, d.max - tonumber(redis.call('HGET', use, scope) or '0'))
end

if op == 'renew' then
  local n = 0
  local exp = now + tonumber(ARGV[2])
  for i = 3, #ARGV do
    if redis.call('ZADD', leases, 'XX', 'CH', exp, ARGV[i]) == 1 then n = n + 1 end
  end
  return n
end

if op == 'prune' then
  local r = redis.call('HSCAN', limits, ARGV[2], 'COUNT', 200)
  local fs, gone = r[2], {}
  for i = 1, #fs, 2 do
    local f, v = fs[i], tonumber(fs[i + 1])
    local tail = string.match(f, '\n(%a+)$')
    if (tail == 'tat' or tail == 'pause') and v and v <= now then gone[#gone + 1] = f end
  end
  if #gone > 0 then redis.call('HDEL', limits, unpack(gone)) end
  return { r[1], #gone }
end

if op == 'pause' then
  local until_ = now + tonumber(ARGV[2])
  for i = 3, #ARGV do
    local f = ARGV[i] .. '\npause'
    local cur = tonumber(redis.call('HGET', limits, f) or '0') or 0
    if until_ > cur then redis.call('HSET', limits, f, string.format('%d', until_)) end
  end
  return 1
end

if op == 'release' then
  local freed = {}
  for i = 3, #ARGV do
    if redis.call('ZREM', leases, ARGV[i]) == 1 then
      local scope = string.match(ARGV[i], '^(.*)\n')
      if scope then
        freed[scope] = true
        if redis.call('HINCRBY', use, scope, -1) <= 0 then redis.call('HDEL', use, scope) end
      end
    end
  end
  local out = {}
  for scope in pairs(freed) do
    local r = room(scope)
    if r > 0 then
      for _, m in ipairs(scope_waiters(wait, scope, r)) do out[#out + 1] = m end
    end
  end
  return out
end

if op == 'unpark' then
  local queue, moved = ARGV[2], 0
  local taken = {} -- scope -> tasks moved in this call
  for i = 3, #ARGV do
    local m, tk = ARGV[i], KEYS[15 + i]
    local scope, inv = string.match(m, '^(.*)\n(%d)|')
    if scope and redis.call('ZSCORE', wait, m) then
      local f = redis.call('HMGET', tk, 'status', 'parked', 'group')
      if f[1] ~= 'QUEUED' or f[2] ~= m then
        redis.call('ZREM', wait, m)
      elseif room(scope) > (taken[scope] or 0) then
        taken[scope] = (taken[scope] or 0) + 1
        redis.call('ZREM', wait, m)
        redis.call('HDEL', tk, 'parked')
        local prio = 9 - tonumber(inv)
        local id = queue .. '-' .. string.sub(m, -26)
        if f[3] then
          admit(KEYS[8 + prio], tk, id, f[3], prio, gwait, gcount)
        else
          readd(KEYS[8 + prio], tk, id)
        end
        moved = moved + 1
      end
    end
  end
  return moved
end

if op == 'sweep' then
  scope_sweep(use, leases, now)
  return walk_waiters(wait, '\n', ARGV[3], tonumber(ARGV[2]), room)
end

return redis.error_reply('ERR scope.lua: unknown op ' .. op)
