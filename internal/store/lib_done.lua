-- lib_done.lua: counts, the done index of finished tasks and the trimming
-- of acknowledged entries; part of the store's library (lib.go).

-- decr subtracts n (a number) from field of hash key and returns the new
-- value: HINCRBY by a negative count, never by "-0" (Lua writes 0 negated
-- so, and Redis refuses it as no integer).
local function decr(key, field, n)
  if n == 0 then return tonumber(redis.call('HGET', key, field) or '0') end
  return redis.call('HINCRBY', key, field, string.format('%d', -n))
end

-- list_done lists finished tasks (a list of ids) as one entry of the done
-- stream, counted in info field "done".
local function list_done(info, done, ids)
  redis.call('XADD', done, '*', 'i', table.concat(ids, ' '))
  redis.call('HINCRBY', info, 'done', #ids)
end

-- prune_done removes up to max entries of the done stream older than
-- cutoff (a Unix ms string), the packed records of their tasks with them
-- (a task's hash expires by itself). Returns the entries removed.
local function prune_done(info, done, fin, cutoff, max)
  local es = redis.call('XRANGE', done, '-', cutoff, 'COUNT', max)
  if #es == 0 then return 0 end
  local us, eids = {}, {}
  for _, e in ipairs(es) do
    eids[#eids + 1] = e[1]
    for id in string.gmatch(e[2][2], '%S+') do us[#us + 1] = string.sub(id, -26) end
  end
  if #us > 0 then redis.call('HDEL', fin, unpack(us)) end
  redis.call('XDEL', done, unpack(eids))
  decr(info, 'done', #us)
  return #es
end

-- trim_band trims band p: every entry older than its oldest pending one
-- has been acknowledged, so XTRIM MINID removes them in one sweep (up to the
-- last delivered one when none is pending); info field b<p> counts the
-- acknowledged entries still there. With sweep, those a long-running task
-- holds back (acknowledged, newer than it) are deleted one by one too. It
-- returns how many acknowledged entries are still there.
local function trim_band(info, band, group, p, sweep)
  local field = 'b' .. p
  local pend = redis.call('XPENDING', band, group)
  local trimmed = 0
  if pend[1] > 0 then
    trimmed = redis.call('XTRIM', band, 'MINID', pend[2])
  else
    for _, g in ipairs(redis.call('XINFO', 'GROUPS', band)) do
      local name, last
      for j = 1, #g, 2 do
        if g[j] == 'name' then name = g[j + 1] elseif g[j] == 'last-delivered-id' then last = g[j + 1] end
      end
      if name == group and last then
        local ms, seq = string.match(last, '^(%d+)-(%d+)$')
        trimmed = redis.call('XTRIM', band, 'MINID', ms .. '-' .. string.format('%d', tonumber(seq) + 1))
      end
    end
  end
  local behind = decr(info, field, trimmed)
  if sweep and behind > 0 and pend[1] > 0 then
    -- the acknowledged entries between the oldest pending one and the
    -- last delivered: those not pending
    local pending = {}
    for _, e in ipairs(redis.call('XPENDING', band, group, pend[2], '+', 1000)) do pending[e[1]] = true end
    local acked = {}
    for _, e in ipairs(redis.call('XRANGE', band, pend[2], pend[3], 'COUNT', 1000)) do
      if not pending[e[1]] then acked[#acked + 1] = e[1] end
    end
    if #acked > 0 then
      behind = decr(info, field, redis.call('XDEL', band, unpack(acked)))
    end
  end
  if behind < 0 then redis.call('HSET', info, field, '0') end
  return behind
end

-- ack_trim acknowledges entries ids of band p; the entries acknowledged
-- and still there are counted in info field b<p>. Once 128 of them are
-- there the band is trimmed (trim_band); past 2048 held back by a
-- long-running task, this batch's are deleted one by one.
local function ack_trim(info, band, group, p, ids)
  redis.call('XACK', band, group, unpack(ids))
  local field = 'b' .. p
  if redis.call('HINCRBY', info, field, #ids) < 128 then return end
  if trim_band(info, band, group, p, false) > 2048 then
    decr(info, field, redis.call('XDEL', band, unpack(ids)))
  end
end

