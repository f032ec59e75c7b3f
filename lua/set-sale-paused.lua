--[[
  set-sale-paused: set or clear the pause flag of a sale that is in Redis, unless a newer pause or resume
  is already there. A sale whose state is not here (Redis lost it, a rebuild has not written it yet) is
  left alone: writing the flag alone would create a meta hash without the sale in it. Postgres holds the
  flag too; the rebuild takes it from there, with its version.

  A pause is time out of every running admission of a queue or draw sale (nobody may buy meanwhile):
  the pause records in the room when it began (pausedAt, kept there: a rebuild replaces the meta hash,
  not the room), or when a rebuild's quiet period still running ends (recoveringUntil: open-room.lua
  moved the admissions by the quiet period already); the resume moves the end of every admission that
  was running then (x > pausedAt) by the time the sale could not be bought since, until now or the end
  of a quiet period still running, then forgets pausedAt. A pause of a paused sale keeps its beginning;
  a resume of a sale that is not paused, or that the room does not know paused, moves nothing.
  room-step.lua lapses none of them while the pause runs.

  KEYS[1]  meta     hash: must have "epoch" (every initialised or rebuilt sale has one); "pauseVersion" is
                    the version of the flag it holds (absent: 0); admission, recoveringUntil (read)
  KEYS[2]  room     hash: pausedAt (ms; written on a pause, removed on the resume) and pausedVersion (the
                    version of the pause that wrote it: the same pause replayed after a rebuild keeps
                    its beginning); quietUntil (read, open-room.lua's)
  KEYS[3]  tickets  hash: userId -> ticket JSON (its admission's end `x` moved on the resume)
  KEYS[4]  active   zset: userId -> admission expiresAt (ms; moved with `x`)
  KEYS[5]  journal  zset: the moved tickets ("t:<userId>") and the room ("r") added (journalled for Postgres, room-step.lua)

  ARGV[1]  "1" to pause, "0" to resume
  ARGV[2]  this pause's or resume's version: sales.pause_version, bumped in Postgres under the sale's row
           lock, so two concurrent calls land in Redis in the order they took the row
  ARGV[3]  now (ms, the store's clock; absent: no admission is moved)

  Returns the code:
    1   OK (set)
    2   NOT_INITIALISED (nothing written)
    19  STALE (a newer pause or resume is already in place; nothing written)
  Codes are named as in src/stock/codes.ts (ScriptCode), one table for every script.
]]
local seq = nil
local function journal(member)
  if not seq then
    seq = redis.call("HINCRBY", KEYS[2], "seq", 1)
  end
  if not redis.call("ZSCORE", KEYS[5], member) then
    redis.call("ZADD", KEYS[5], seq, member)
  end
  return seq
end
if redis.call("HEXISTS", KEYS[1], "epoch") == 0 then
  return 2
end
local version = tonumber(ARGV[2] or "0")
if version < tonumber(redis.call("HGET", KEYS[1], "pauseVersion") or "0") then
  return 19
end
local wasPaused = redis.call("HGET", KEYS[1], "paused") == "1"
redis.call("HSET", KEYS[1], "paused", ARGV[1], "pauseVersion", ARGV[2])
local now = tonumber(ARGV[3] or "")
local mode = redis.call("HGET", KEYS[1], "admission")
if not now or (mode ~= "queue" and mode ~= "draw") then
  return 1
end
-- a quiet period moved the admissions already (open-room.lua): the pause counts from its end
local room = redis.call("HMGET", KEYS[2], "pausedAt", "pausedVersion", "quietUntil")
local buyableFrom = math.max(now, tonumber(redis.call("HGET", KEYS[1], "recoveringUntil") or "0"),
  tonumber(room[3] or "0"))
local pausedAt = tonumber(room[1] or "")
-- this very pause, written before a rebuild replaced the meta with an older flag and replayed it now
local samePause = pausedAt and room[2] == ARGV[2]
if ARGV[1] == "1" then
  -- a pausedAt left by a pause whose resume never reached this meta (a rebuild wrote the flag) is old
  if not ((wasPaused or samePause) and pausedAt) then
    redis.call("HSET", KEYS[2], "pausedAt", buyableFrom, "pausedVersion", ARGV[2], "v", journal("r"))
  end
  return 1
end
if wasPaused and pausedAt then
  local shift = buyableFrom - pausedAt
  if shift > 0 then
    for _, userId in ipairs(redis.call("ZRANGEBYSCORE", KEYS[4], "(" .. pausedAt, "+inf")) do
      local t = cjson.decode(redis.call("HGET", KEYS[3], userId))
      t.x = t.x + shift
      t.v = journal("t:" .. userId)
      redis.call("HSET", KEYS[3], userId, cjson.encode(t))
      redis.call("ZADD", KEYS[4], t.x, userId)
    end
  end
  redis.call("HDEL", KEYS[2], "pausedAt", "pausedVersion")
  redis.call("HSET", KEYS[2], "v", journal("r"))
end
return 1
