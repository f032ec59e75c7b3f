--[[
  room-line: reads a sale's line before its seal, for the caller to rank: the users who took a ticket
  before the start, in join order, and their ticket ids, with the room's seed.

  KEYS[1]  room     hash: sealed, seed
  KEYS[2]  tickets  hash: userId -> ticket JSON {id, …}
  KEYS[3]  line     list: the tickets taken before the start (userIds)

  ARGV     none

  Returns:
    {1, seed, n, userId1..userIdN, ticketId1..ticketIdN}   OK
    {20}                                                   ALREADY_EXISTS: sealed already
  Codes are named as in src/stock/codes.ts (ScriptCode), one table for every script.
]]
if redis.call("HGET", KEYS[1], "sealed") == "1" then
  return {20}
end
local users = redis.call("LRANGE", KEYS[3], 0, -1)
local reply = {1, redis.call("HGET", KEYS[1], "seed") or "", #users}
for _, userId in ipairs(users) do
  reply[#reply + 1] = userId
end
for _, userId in ipairs(users) do
  reply[#reply + 1] = cjson.decode(redis.call("HGET", KEYS[2], userId)).id
end
return reply
