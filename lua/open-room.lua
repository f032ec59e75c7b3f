--[[
  open-room: gives a queue or draw sale's waiting room its secret seed and the seed's SHA-256, once. A
  room that has its seed keeps it (a retried create, a rebuild of a sale whose room Redis kept), so the
  published seedHash never changes under a draw; a room without one (created before its sale's meta, a
  create that failed half-way, a room lost with Redis) gets this one, before anything can draw with none.

  A room lost with Redis while admissions ran also forgot their holds: with ARGV[3] (a rebuild after the
  start) it admits nobody before then (queue-step.lua reads admitFrom), so every admission given
  before the loss runs out, its shopper still able to buy what it held, before a new one is given.

  KEYS[1]  room  hash: seed, seedHash, admitFrom (written here when the seed is absent)

  ARGV[1]  seed (32 random bytes, hex; the caller's randomness: none is made here)
  ARGV[2]  seedHash (SHA-256 of the seed, hex)
  ARGV[3]  admitFrom (ms; "0" or absent: no wait): when the room, found without its seed, may admit again

  Returns the code:
    1   OK (the seed was written)
    20  ALREADY_EXISTS (the room had a seed; nothing changed)
  Codes are named as in src/stock/codes.ts (ScriptCode), one table for every script.
]]
if redis.call("HEXISTS", KEYS[1], "seed") == 1 then
  return 20
end
redis.call("HSET", KEYS[1], "seed", ARGV[1], "seedHash", ARGV[2])
if tonumber(ARGV[3] or "0") > 0 then
  redis.call("HSET", KEYS[1], "admitFrom", ARGV[3])
end
return 1
