--[[
  room-journal: reads the oldest part of a waiting room's journal, for the caller to write to Postgres
  (src/room/room-record.ts): what changed since it was last written, each with the state it has now, in
  one atomic read, so a ticket's state and its `v` (the journal position of its last change) agree.

  KEYS[1]  room     hash: seq (the journal's position), v and the durable fields (frontier, cutoff,
                    sealed, drawnAt, entriesHash, quietUntil, pausedAt, pausedVersion, seedHash)
  KEYS[2]  tickets  hash: userId -> ticket JSON {…, v}
  KEYS[3]  journal  zset: member ("t:<userId>", "r" the room's fields, "e" the entry list) -> journal
                    position of its first unwritten change
  KEYS[4]  entries  string: the seal's sorted entry list (JSON)

  ARGV[1]  at most this many members

  Returns:
    {1, through, room, seed, seedHash, entries, gen, seq, userId1, ticket1, …}   OK
    {2}                                                       NOT_INITIALISED: the room has no seed (lost)
  Codes are named as in src/stock/codes.ts (ScriptCode), one table for every script.

  `through`, the journal position up to
  which everything is in this reply (every change at or below it is written once this reply is); `room`,
  the room's fields as JSON when "r" is among the members read and the reply holds the whole
  journal, else "" (fields read now may describe changes past `through`, e.g. a frontier moved past
  tickets whose admission is not in this reply: they wait, and `through` stays below their position);
  `gen`, the room's life (a restore moves it on); `seq`, the journal's position now; `entries`, the seal's entry list (JSON) when "e" is among the members read (once: it never
  changes), else ""; a ticket "" when its user has none (nothing to write: acknowledged all the same).
]]
local seed = redis.call("HMGET", KEYS[1], "seed", "seedHash", "gen")
if not seed[1] then
  return {2}
end
local limit = tonumber(ARGV[1])
local members = redis.call("ZRANGE", KEYS[3], 0, limit, "WITHSCORES")
local through = tonumber(redis.call("HGET", KEYS[1], "seq") or "0")
local count = #members / 2
local whole = count <= limit
if not whole then
  -- the first member left out: everything below its position is in this reply
  through = tonumber(members[2 * limit + 2]) - 1
  count = limit
end
local reply = {1, 0, "", seed[1], seed[2] or "", "", tonumber(seed[3] or "0"), through}
for i = 1, count do
  local member = members[2 * i - 1]
  if member == "r" and not whole then
    through = math.min(through, tonumber(members[2 * i]) - 1)
  elseif member == "r" then
    local f = redis.call("HMGET", KEYS[1], "v", "frontier", "cutoff", "sealed", "drawnAt", "entriesHash",
      "quietUntil", "pausedAt", "pausedVersion")
    reply[3] = cjson.encode({v = f[1], frontier = f[2], cutoff = f[3], sealed = f[4], drawnAt = f[5],
      entriesHash = f[6], quietUntil = f[7], pausedAt = f[8], pausedVersion = f[9]})
  elseif member == "e" then
    reply[6] = redis.call("GET", KEYS[4]) or ""
  else
    local userId = string.sub(member, 3)
    reply[#reply + 1] = userId
    reply[#reply + 1] = redis.call("HGET", KEYS[2], userId) or ""
  end
end
reply[2] = through
return reply
