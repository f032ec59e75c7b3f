--[[
  room-journal-ack: forgets the journal's members whose state is now in Postgres (src/room/room-record.ts),
  unless they changed since they were read (their `v` moved on): those stay, to be written again.

  KEYS[1]  room     hash: v (the journal position of the room fields' last change); recorded (the
                    journal position up to which everything is in Postgres: raised here)
  KEYS[2]  tickets  hash: userId -> ticket JSON {…, v}
  KEYS[3]  journal  zset: member -> journal position of its first unwritten change

  ARGV[1]  the journal position up to which the page written holds everything
  ARGV[2…] pairs: member ("r" the room, "e" the entry list, or "t:<userId>"), the `v` written ("" for a
           user without a ticket, and for "e": the entry list never changes once written)

  Returns:
    {1, forgotten}   OK (the number of members forgotten)
    {2}              NOT_INITIALISED: the room has no seed (lost: nothing to forget)
  Codes are named as in src/stock/codes.ts (ScriptCode), one table for every script.
]]
if redis.call("HEXISTS", KEYS[1], "seed") == 0 then
  return {2}
end
if tonumber(ARGV[1]) > tonumber(redis.call("HGET", KEYS[1], "recorded") or "0") then
  redis.call("HSET", KEYS[1], "recorded", ARGV[1])
end
local forgotten = 0
for i = 2, #ARGV, 2 do
  local member = ARGV[i]
  local current
  if member == "r" then
    current = redis.call("HGET", KEYS[1], "v") or ""
  elseif member == "e" then
    current = ""
  else
    local ticket = redis.call("HGET", KEYS[2], string.sub(member, 3))
    current = ticket and tostring(cjson.decode(ticket).v or "") or ""
  end
  if current == ARGV[i + 1] then
    forgotten = forgotten + redis.call("ZREM", KEYS[3], member)
  end
end
return {1, forgotten}
