--[[
  open-room: gives a queue or draw sale's waiting room its secret seed and the seed's SHA-256, once. A
  room that has its seed keeps it (a retried create, a rebuild of a sale whose room Redis kept), so the
  published seedHash never changes under a draw; a room without one (created before its sale's meta, a
  create that failed half-way, a room lost with Redis) gets this one, before anything can draw with none.

  A room lost with Redis while admissions ran also forgot their holds: with ARGV[3] (a rebuild after the
  start) it admits nobody before then (room-step.lua reads admitFrom), so every admission given
  before the loss runs out, its shopper still able to buy what it held, before a new one is given.

  A rebuild's quiet period (ARGV[4], ARGV[5]: nobody may buy until it ends) is time out of the room's
  running admissions: those running at its start (x > now) end that much later, less what an earlier
  quiet period still running covered already (meta recoveringUntil, read before the rebuild replaces
  it, and the room's quietUntil, written here: two rebuilds at once, or a rebuild retried after this
  ran, move them once). While an operator's pause runs (meta paused "1" and the room's pausedAt) nothing moves here: the
  resume moves them until the quiet period's end (set-sale-paused.lua).

  KEYS[1]  room     hash: seed, seedHash, admitFrom (written here when the seed is absent); pausedAt (read);
                    quietUntil (the end of the last quiet period the admissions were moved for)
  KEYS[2]  meta     hash: paused, recoveringUntil (read; absent when Redis lost the sale)
  KEYS[3]  tickets  hash: userId -> ticket JSON (its admission's end `x` moved for the quiet period)
  KEYS[4]  active   zset: userId -> admission expiresAt (ms; moved with `x`)
  KEYS[5]  journal  zset: the moved tickets ("t:<userId>") and the room ("r") added (journalled for Postgres, room-step.lua)

  ARGV[1]  seed (32 random bytes, hex; the caller's randomness: none is made here)
  ARGV[2]  seedHash (SHA-256 of the seed, hex)
  ARGV[3]  admitFrom (ms; "0" or absent: no wait): when the room, found without its seed, may admit again
  ARGV[4]  now (ms, the store's clock): the quiet period's start (absent: no quiet period)
  ARGV[5]  the quiet period's end (ms)
  ARGV[6]  the room's life (its record's `gen`, src/room/room-record.ts), written with the seed (absent: 0)

  Returns the code:
    1   OK (the seed was written)
    20  ALREADY_EXISTS (the room had a seed; nothing of it changed)
  Codes are named as in src/stock/codes.ts (ScriptCode), one table for every script.
]]
local seq = nil
local function journal(member)
  if not seq then
    seq = redis.call("HINCRBY", KEYS[1], "seq", 1)
  end
  if not redis.call("ZSCORE", KEYS[5], member) then
    redis.call("ZADD", KEYS[5], seq, member)
  end
  return seq
end
local now = tonumber(ARGV[4] or "")
if now and KEYS[5] then
  local meta = redis.call("HMGET", KEYS[2], "paused", "recoveringUntil")
  local room = redis.call("HMGET", KEYS[1], "pausedAt", "quietUntil")
  local paused = meta[1] == "1" and room[1] ~= false
  -- the quiet periods this room was moved for already, whether their rebuild wrote the meta yet or not
  local from = math.max(now, tonumber(meta[2] or "0"), tonumber(room[2] or "0"))
  local shift = tonumber(ARGV[5]) - from
  if shift > 0 then
    redis.call("HSET", KEYS[1], "quietUntil", ARGV[5], "v", journal("r"))
  end
  if not paused and shift > 0 then
    for _, userId in ipairs(redis.call("ZRANGEBYSCORE", KEYS[4], "(" .. now, "+inf")) do
      local t = cjson.decode(redis.call("HGET", KEYS[3], userId))
      t.x = t.x + shift
      t.v = journal("t:" .. userId)
      redis.call("HSET", KEYS[3], userId, cjson.encode(t))
      redis.call("ZADD", KEYS[4], t.x, userId)
    end
  end
end
if redis.call("HEXISTS", KEYS[1], "seed") == 1 then
  return 20
end
redis.call("HSET", KEYS[1], "seed", ARGV[1], "seedHash", ARGV[2], "gen", ARGV[6] or "0")
if tonumber(ARGV[3] or "0") > 0 then
  redis.call("HSET", KEYS[1], "admitFrom", ARGV[3])
end
return 1
