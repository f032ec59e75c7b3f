--[[
  room-seal: puts a sale's waiting room in its final order at the start, once. The caller ranked the
  tickets taken before startsAt (the draw's function of the seed and the entries, src/room/draw.ts);
  they take positions 1..N in that order, then the tickets taken at or after the start before this seal,
  in the order they came. From then on a join takes the next position at once.

  KEYS[1]  room     hash: sealed, drawnAt, entriesHash (written here)
  KEYS[2]  tickets  hash: userId -> ticket JSON (its position `p` written here)
  KEYS[3]  line     list: the tickets taken before the start, in join order; positions after
  KEYS[4]  late     list: the tickets taken after the start before the seal (emptied here)
  KEYS[5]  entries  string: the sorted entry list (JSON), published by the draw route
  KEYS[6]  journal  zset: "r" and "e" added (the seal and its entry list are journalled for
                    Postgres, room-step.lua); the tickets' positions are not: they follow from the seed,
                    the entries and the join numbers

  ARGV[1]  now (ms)
  ARGV[2]  entriesHash (SHA-256 of the sorted entry list)
  ARGV[3]  the sorted entry list (JSON)
  ARGV[4…] the userIds of the line, ranked

  Returns the code:
    1   OK (sealed now)
    20  ALREADY_EXISTS: sealed before (nothing changed)
    19  STALE: the line changed since the caller read it (nothing changed; read it again)
  Codes are named as in src/stock/codes.ts (ScriptCode), one table for every script.
]]
if redis.call("HGET", KEYS[1], "sealed") == "1" then
  return 20
end
local ranked = #ARGV - 3
if redis.call("LLEN", KEYS[3]) ~= ranked then
  return 19
end
local late = redis.call("LRANGE", KEYS[4], 0, -1)
redis.call("DEL", KEYS[3], KEYS[4])
local position = 0
local function place(userId)
  position = position + 1
  redis.call("RPUSH", KEYS[3], userId)
  local t = cjson.decode(redis.call("HGET", KEYS[2], userId))
  t.p = position
  redis.call("HSET", KEYS[2], userId, cjson.encode(t))
end
for i = 4, #ARGV do
  place(ARGV[i])
end
for _, userId in ipairs(late) do
  place(userId)
end
redis.call("HSET", KEYS[1], "sealed", "1", "drawnAt", ARGV[1], "entriesHash", ARGV[2])
redis.call("SET", KEYS[5], ARGV[3])
local seq = redis.call("HINCRBY", KEYS[1], "seq", 1)
redis.call("HSET", KEYS[1], "v", seq)
for _, member in ipairs({"r", "e"}) do
  if not redis.call("ZSCORE", KEYS[6], member) then
    redis.call("ZADD", KEYS[6], seq, member)
  end
end
return 1
