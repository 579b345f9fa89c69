-- unique_sweep.lua: free unique locks whose holders are gone (their task
-- hashes expired or were deleted), so the uniq hash holds no more than the
-- tasks that exist.
--
-- KEYS[1]        uniq hash
-- KEYS[2..N+1]   the holders' task hashes, in order
--
-- ARGV[1..N]     lock, holder: 2 values per lock (the caller read them)
--
-- A lock is freed only if it still names that holder and the holder's
-- hash is gone. Returns the number freed.

local freed = 0
for i = 1, #KEYS - 1 do
  local lock, holder = ARGV[2 * i - 1], ARGV[2 * i]
  if redis.call('EXISTS', KEYS[1 + i]) == 0 and redis.call('HGET', KEYS[1], lock) == holder then
    redis.call('HDEL', KEYS[1], lock)
    freed = freed + 1
  end
end
return freed
