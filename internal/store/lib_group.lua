-- lib_group.lua: fair scheduling across groups (EnqueueOpts.Group) and the
-- waiting lists groups and scoped limits share; part of the store's library
-- (lib.go).

-- GROUP_WINDOW is store.GroupWindow: how many entries of one group the
-- bands hold at once, not started yet.
local GROUP_WINDOW = 10

-- group_window returns how many entries group may keep in the bands: the
-- window times its weight (gcount's field "w:<group>", default 1; no
-- group is named so). The bands serve a group in proportion to it.
local function group_window(gcount, group)
  return GROUP_WINDOW * (tonumber(redis.call('HGET', gcount, 'w:' .. group) or '1') or 1)
end

-- admit puts QUEUED task id (hash tk) of group and priority prio into band,
-- as an entry admitted under its group's window, when the group has room
-- there (gcount: admitted entries not started yet, per group); else it
-- waits in gwait, member "<group>|<9-prio>|<seq>|<ULID>" (store.GroupMember;
-- seq, 16 digits, counts in gcount's field "#"), until the start of one of
-- its group's entries moves it in. Its hash keeps the member ("gwait") while
-- it waits. Returns true when it entered the band.
local function admit(band, tk, id, group, prio, gwait, gcount)
  if tonumber(redis.call('HGET', gcount, group) or '0') < group_window(gcount, group) then
    readd(band, tk, id, group)
    redis.call('HINCRBY', gcount, group, 1)
    return true
  end
  local seq = redis.call('HINCRBY', gcount, '#', 1)
  local m = group .. '|' .. string.format('%d', 9 - tonumber(prio)) .. '|' .. string.format('%016d', seq) .. '|' ..
    string.sub(id, -26)
  redis.call('ZADD', gwait, 0, m)
  redis.call('HSET', tk, 'gwait', m)
  return false
end

-- waiters returns up to n members of zset (equal scores) that start with
-- prefix then sep, in order: the best waiters of a group (gwait, "|") or a
-- scope (limwait, "\n").
local function waiters(zset, prefix, sep, n)
  return redis.call('ZRANGEBYLEX', zset, '[' .. prefix .. sep, '[' .. prefix .. sep .. '\255', 'LIMIT', 0, n)
end

-- group_waiters returns up to n members of gwait of group, best first.
local function group_waiters(gwait, group, n) return waiters(gwait, group, '|', n) end

-- walk_waiters visits, from the prefix after ("" = the first), up to
-- visits of the prefixes (groups, scopes) of zset's members
-- "<prefix><sep>…" (no prefix holds sep; a member without one is dropped)
-- and returns { the prefix to go on after ("" = done), the best members
-- of each prefix for its room(prefix)... }.
local function walk_waiters(zset, sep, after, visits, room)
  local out = { '' }
  local from = '-'
  if after ~= '' then from = '(' .. after .. sep .. '\255' end
  for _ = 1, visits do
    local first = redis.call('ZRANGEBYLEX', zset, from, '+', 'LIMIT', 0, 1)
    if #first == 0 then
      out[1] = ''
      return out
    end
    local i = string.find(first[1], sep, 1, true)
    if not i then
      redis.call('ZREM', zset, first[1])
    else
      local prefix = string.sub(first[1], 1, i - 1)
      local r = room(prefix)
      if r > 0 then
        for _, m in ipairs(waiters(zset, prefix, sep, r)) do out[#out + 1] = m end
      end
      from = '(' .. prefix .. sep .. '\255'
      out[1] = prefix
    end
  end
  return out
end

-- group_left counts one admitted entry of group out of the bands (started,
-- or skipped). Returns the room the group has now.
local function group_left(gcount, group)
  local left = redis.call('HINCRBY', gcount, group, -1)
  if left <= 0 then
    redis.call('HDEL', gcount, group)
    left = 0
  end
  return group_window(gcount, group) - left
end


-- promote_task moves a due task into its band as QUEUED: task id, hash tk,
-- whose fields f are HMGET status, prio, type, attempt, group, wait, owait
-- (SCHEDULED, or QUEUED with its order key passed to it: its "owait"
-- goes). KEYS[base + p] is the band of priority p. A suspended task (its
-- "wait") stops waiting and leaves the suspended zset: one waiting for a
-- signal that did not come gets the record of its timeout, "t|<Redis ms>|",
-- as the step record of the signal's name in steps hash sk (kept keep ms
-- when made here) — unless the signal's is there (the first record stands).
-- A task of a group enters under its group's window, or waits in gwait.
-- The caller takes it out of the schedule. Returns its QUEUED event.
local function promote_task(base, tk, sk, id, f, gwait, gcount, suspended, keep, nowS)
  redis.call('HSET', tk, 'status', 'QUEUED')
  if f[7] then redis.call('HDEL', tk, 'owait') end
  if f[6] then
    redis.call('HDEL', tk, 'wait')
    redis.call('ZREM', suspended, id)
    local name = string.match(f[6], '^signal (.*)$')
    if name and redis.call('HSETNX', sk, name, 't|' .. nowS .. '|') == 1 and redis.call('PTTL', sk) < 0 then
      redis.call('PEXPIRE', sk, keep)
    end
  end
  if f[5] then
    admit(KEYS[base + tonumber(f[2])], tk, id, f[5], f[2], gwait, gcount)
  else
    readd(KEYS[base + tonumber(f[2])], tk, id)
  end
  return id .. '\tQUEUED\t' .. f[3] .. '\t' .. (f[4] or '0') .. '\t' .. f[2] .. '\t' .. nowS
end
