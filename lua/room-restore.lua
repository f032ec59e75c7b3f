--[[
  room-restore: gives a waiting room lost with Redis (or behind its record) back from its Postgres record
  (src/room/room-record.ts), in one step: the tickets, line, late list and admissions the caller staged under keys of its own
  (written in chunks: a room of 100,000 tickets is more than one command should carry) take the live
  keys' place, and the room's fields are written, unless the room has its seed (it was not lost, or
  another rebuild restored it first): then the staged keys are dropped and nothing else changes.

  KEYS[1]  room     hash: the fields written here (seed, seedHash, count, frontier, cutoff, sealed, …, seq)
  KEYS[2]  tickets  KEYS[3] line  KEYS[4] late  KEYS[5] active   the live keys (replaced)
  KEYS[6]  entries  string: the seal's sorted entry list (JSON)
  KEYS[7]  journal  zset: emptied (everything restored is in Postgres)
  KEYS[8]  staged tickets  hash: userId -> ticket JSON (becomes the tickets hash)
  KEYS[9]  staged lists    hash: "line:<i>" and "late:<i>" (i from 0) -> a JSON array of userIds, the
                           lists' chunks in order

  ARGV[1]  the room's fields (JSON object of strings)
  ARGV[2]  the entry list (JSON), or "" for none
  ARGV[3]  the running admissions: JSON array of [userId, expiresAt]
  ARGV[4]  a life (`gen`): the room is replaced if it has this one (a room behind its record: a failover
           lost writes Postgres has); "" or absent: only a room without its seed is

  Returns:
    {1}        OK (restored)
    {20, gen}  ALREADY_EXISTS (the room has its seed: nothing restored; gen, the life of the room it has)
  Codes are named as in src/stock/codes.ts (ScriptCode), one table for every script.
]]
local kept = redis.call("HMGET", KEYS[1], "seed", "gen")
if kept[1] and (ARGV[4] or "") ~= "" and (kept[2] or "0") == ARGV[4] then
  kept[1] = false
end
if kept[1] then
  redis.call("DEL", KEYS[8], KEYS[9])
  return {20, tonumber(redis.call("HGET", KEYS[1], "gen") or "0")}
end
redis.call("DEL", KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7])
if redis.call("EXISTS", KEYS[8]) == 1 then
  redis.call("PERSIST", KEYS[8])
  redis.call("RENAME", KEYS[8], KEYS[2])
end
for list, key in pairs({line = KEYS[3], late = KEYS[4]}) do
  local i = 0
  while true do
    local chunk = redis.call("HGET", KEYS[9], list .. ":" .. i)
    if not chunk then
      break
    end
    redis.call("RPUSH", key, unpack(cjson.decode(chunk)))
    i = i + 1
  end
end
redis.call("DEL", KEYS[9])
for _, admission in ipairs(cjson.decode(ARGV[3])) do
  redis.call("ZADD", KEYS[5], admission[2], admission[1])
end
for field, value in pairs(cjson.decode(ARGV[1])) do
  redis.call("HSET", KEYS[1], field, value)
end
if ARGV[2] ~= "" then
  redis.call("SET", KEYS[6], ARGV[2])
end
return {1}
