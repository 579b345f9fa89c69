-- lock.lua: renew or release a lock held by one owner (a scheduler's
-- leader lock, an IdempotentOperation's hold).
--
-- KEYS[1]        the lock
--
-- ARGV[1]        "renew" or "release"
-- ARGV[2]        the owner's token
-- ARGV[3]        renew: the new time to live, ms
--
-- Acts only while the lock holds the owner's token. Returns 1 when it
-- acted, 0 when the lock is not the owner's.

if redis.call('GET', KEYS[1]) ~= ARGV[2] then return 0 end
if ARGV[1] == 'renew' then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
else
  redis.call('DEL', KEYS[1])
end
return 1
