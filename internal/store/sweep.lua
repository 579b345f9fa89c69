-- sweep.lua: delete the acknowledged entries of a queue's bands (the
-- scheduler's pass, every few seconds): finish trims them only once 128
-- gather, and a long-running task holds back those newer than it.
--
-- KEYS[1]        info hash (fields b0..b9: acknowledged entries still there)
-- KEYS[2..11]    band streams of priority 0..9
--
-- ARGV[1]        consumer group
--
-- Returns how many acknowledged entries are left (0 unless over 1000 wait
-- behind a running task in one band).

local info, group = KEYS[1], ARGV[1]
local left = 0
for p = 0, 9 do
  local n = tonumber(redis.call('HGET', info, 'b' .. p) or '0')
  if n > 0 then
    local ok, r = pcall(trim_band, info, KEYS[2 + p], group, tostring(p), true)
    if ok then left = left + math.max(0, r) else redis.call('HSET', info, 'b' .. p, '0') end
  end
end
return left
