--[[
  room-step: one step of a sale's waiting room, atomically: an optional join, then the promotion.
  Joining is this one script call; every read of the room (a ticket, the feed's tick) runs it too, so
  returned units are offered again wherever the room is looked at.

  Promotion (only once the line is sealed, see room-seal.lua):
    1. on a tick (ARGV[6] >= 0: the room feed's and the sweep's steps), admissions whose window ended
       (expiresAt + grace <= now) lapse, but while an operator's pause runs none of those running when
       it began (the resume moves their ends by its length: set-sale-paused.lua; a rebuild's quiet
       period moved them at its start: open-room.lua), and what admitted shoppers may still take is
       counted (each running admission holds h units, minus the units its shopper holds in live
       orders): room.held;
    2. units free for new admissions = remaining - held; between ticks (joins, reads) the count kept
       is used, with new admissions added and the smaller of remaining now and at the count (a count
       only errs high since: never more is admitted than the units cover);
    3. tickets are admitted in line order while units are free and their position is within the cutoff
       (never while the sale is paused, in a rebuild's quiet period, or before the room's admitFrom):
       each holds min(perUserLimit, free) units for the admission window;
    4. with the paid units known (ARGV[6] >= 0), the cutoff is lowered to the furthest position any
       unit not yet paid could still reach: frontier + (free + holds + units in unpaid orders) x rounds,
       where rounds = 1 + the admission cycles (window + grace) left before the sale's end. A unit
       admits at most one position per cycle (it comes back only when an admission lapses, or an unpaid
       order expires or is cancelled after its shopper's admission ended), so no position past the
       cutoff can be reached: a `will_not_get` verdict is final, and every unit that comes back is
       offered again while the sale runs. Paid units never come back. The cutoff never rises.

  KEYS[1]  meta      hash: perUserLimit, startsAt, endsAt, stock, admission ("open" | "queue" | "draw"),
                     paused ("1": an operator's pause), recoveringUntil (ms: a rebuild's quiet period);
                     nobody is admitted while either holds (nobody may buy then: an admission would run
                     out unused)
  KEYS[2]  stock     string: units remaining
  KEYS[3]  holdings  hash: userId -> units held in live orders
  KEYS[4]  room      hash: sealed ("1"), count (tickets), frontier (positions passed), cutoff, held
                     (units admissions hold, as last counted plus admissions since), countedRemaining,
                     admitFrom (ms: a room rebuilt after a loss admits nobody before; open-room.lua),
                     pausedAt (ms: when the operator's pause began, while meta's paused is "1")
  KEYS[5]  tickets   hash: userId -> ticket JSON {id, n, p, s ("w" | "a" | "l"), h, x, at}
  KEYS[6]  line      list: userIds; before the seal the tickets taken before startsAt, then positions
  KEYS[7]  late      list: userIds that joined at or after startsAt before the seal
  KEYS[8]  active    zset: userId -> admission expiresAt (ms)
  KEYS[9]  journal   zset: what changed and is not yet in Postgres ("t:<userId>" for a ticket, "r" for the
                     room's durable fields, "e" for the seal's entry list) -> the journal position of its
                     first change since (src/room/room-record.ts)

  ARGV[1]  now (ms)
  ARGV[2]  userId joining, or "" (a step without a join)
  ARGV[3]  a fresh ticket id (used only when the user has none)
  ARGV[4]  admission window (ms)
  ARGV[5]  grace after an admission's expiry before its hold is given up (ms)
  ARGV[6]  units in paid orders (a reading no newer than now: paid units only grow), or -1 when unknown
  ARGV[7]  userId whose ticket to return ("" for none)
  ARGV[8]  "1": admit nobody at this step (the caller cannot write the room's journal to Postgres now, so
           an admission's window would run while its shopper cannot be shown it); absent or "0": admit

  Returns:
    {1, ticket, frontier, cutoff, free, held, remaining, sealed, length, admittedNow, pausedAt, seq, gen, recorded}  OK
                        ticket or ""; cutoff or -1; length = tickets in line and late lists; pausedAt -1
                        but while a pause runs; seq: the room's journal position after this step (what the
                        caller shows is in Postgres once the journal is written that far); gen: the room's
                        life, which a restore moves on; recorded: the position up to which Redis was told
                        the journal is in Postgres (room-journal-ack.lua)
    {2}                 NOT_INITIALISED: the sale is not in this Redis
    {23}                NO_QUEUE: the sale admits everyone (admission "open")
    {5}                 ENDED: a join after the sale's end (nothing changed)
    {24}                ENTRIES_CLOSED: a join of a draw after its start (nothing changed)
  Codes are named as in src/stock/codes.ts (ScriptCode), one table for every script.

  Every change is journalled: one position per step that changes anything (the room's seq), written
  into each changed ticket (`v`) and the room (`v`), and the changed ticket (or the room) added to
  the journal at its first change since it was last written to Postgres.
]]
local now = tonumber(ARGV[1])
local seq = nil
local function journal(member)
  if not seq then
    seq = redis.call("HINCRBY", KEYS[4], "seq", 1)
  end
  if not redis.call("ZSCORE", KEYS[9], member) then
    redis.call("ZADD", KEYS[9], seq, member)
  end
  return seq
end
local joining = ARGV[2]
local meta = redis.call("HMGET", KEYS[1], "perUserLimit", "startsAt", "endsAt", "admission", "paused",
  "recoveringUntil")
if not meta[1] then
  return {2}
end
local mode = meta[4] or "open"
if mode ~= "queue" and mode ~= "draw" then
  return {23}
end
local limit = tonumber(meta[1])
local startsAt = tonumber(meta[2])
local endsAt = tonumber(meta[3])
local roomFlags = redis.call("HMGET", KEYS[4], "sealed", "admitFrom", "pausedAt")
local sealed = roomFlags[1] == "1"
-- an operator's pause running since pausedAt (set-sale-paused.lua): time out of the admissions running
-- then, which the resume moves on; none of them lapses meanwhile
local pausedAt = meta[5] == "1" and tonumber(roomFlags[3] or "") or nil
-- admitFrom: a room rebuilt after a loss waits for the admissions given before it to run out
local buying = meta[5] ~= "1" and now >= tonumber(meta[6] or "0") and now >= tonumber(roomFlags[2] or "0")
  and ARGV[8] ~= "1"

if joining ~= "" and redis.call("HEXISTS", KEYS[5], joining) == 0 then
  if now >= endsAt then
    return {5}
  end
  if mode == "draw" and (sealed or now >= startsAt) then
    return {24}
  end
  local n = redis.call("HINCRBY", KEYS[4], "count", 1)
  local position = 0
  if sealed then
    position = redis.call("RPUSH", KEYS[6], joining)
  elseif now < startsAt then
    redis.call("RPUSH", KEYS[6], joining)
  else
    redis.call("RPUSH", KEYS[7], joining)
  end
  redis.call("HSET", KEYS[5], joining,
    cjson.encode({id = ARGV[3], n = n, p = position, s = "w", h = 0, x = 0, at = now, v = journal("t:" .. joining)}))
end

local state = redis.call("HMGET", KEYS[4], "frontier", "cutoff", "held", "countedRemaining")
local frontier = tonumber(state[1] or "0")
local cutoff = tonumber(state[2] or "-1")
local held = tonumber(state[3] or "0")
local remaining = tonumber(redis.call("GET", KEYS[2]) or "0")
local exact = tonumber(ARGV[6]) >= 0
local admittedNow = 0
local freeNow = remaining - held

-- the units admitted shoppers may still take, counted over every running admission (two HMGETs per
-- 500 admissions); only the ticks count (ARGV[6] >= 0), the joins and reads use the tick's count
local function countHeld()
  local total = 0
  local users = redis.call("ZRANGE", KEYS[8], 0, -1)
  for i = 1, #users, 500 do
    local chunk = {unpack(users, i, math.min(#users, i + 499))}
    local tickets = redis.call("HMGET", KEYS[5], unpack(chunk))
    local bought = redis.call("HMGET", KEYS[3], unpack(chunk))
    for j = 1, #chunk do
      local h = cjson.decode(tickets[j]).h
      local b = tonumber(bought[j] or "0")
      if h > b then
        total = total + h - b
      end
    end
  end
  return total
end

if sealed then
  local window = tonumber(ARGV[4])
  local free
  if exact then
    local lapsedBy = now - tonumber(ARGV[5])
    if pausedAt then
      lapsedBy = math.min(lapsedBy, pausedAt)
    end
    for _, userId in ipairs(redis.call("ZRANGEBYSCORE", KEYS[8], "-inf", lapsedBy)) do
      local t = cjson.decode(redis.call("HGET", KEYS[5], userId))
      t.s = "l"
      t.v = journal("t:" .. userId)
      redis.call("HSET", KEYS[5], userId, cjson.encode(t))
      redis.call("ZREM", KEYS[8], userId)
    end
    held = countHeld()
    free = remaining - held
    redis.call("HSET", KEYS[4], "countedRemaining", remaining)
  else
    -- since the last count, buys took units from both remaining and the holds (the count is high);
    -- units given back may be an admitted shopper's own (their hold grows again): those wait for the
    -- next count, so the smaller of the two readings of remaining is used
    free = math.min(remaining, tonumber(state[4] or remaining)) - held
  end
  local length = redis.call("LLEN", KEYS[6])
  while buying and free > 0 and frontier < length and (cutoff < 0 or frontier < cutoff) and now < endsAt do
    local last = math.min(length, frontier + free, cutoff < 0 and length or cutoff) - 1
    for _, userId in ipairs(redis.call("LRANGE", KEYS[6], frontier, last)) do
      frontier = frontier + 1
      local t = cjson.decode(redis.call("HGET", KEYS[5], userId))
      if t.s == "w" then
        t.s = "a"
        t.h = math.min(limit, free)
        t.x = now + window
        t.v = journal("t:" .. userId)
        redis.call("HSET", KEYS[5], userId, cjson.encode(t))
        redis.call("ZADD", KEYS[8], t.x, userId)
        free = free - t.h
        held = held + t.h
        admittedNow = admittedNow + 1
        if free <= 0 then
          break
        end
      end
    end
  end
  -- while nobody may buy (paused, restoring) nobody was admitted: the cutoff waits for the next tick
  -- that admits (a reach taken now would not count the positions those units are about to admit)
  if exact and (buying or now >= endsAt) then
    local stock = tonumber(redis.call("HGET", KEYS[1], "stock") or "0")
    local unpaid = math.max(0, stock - remaining - tonumber(ARGV[6]))
    local cycle = window + tonumber(ARGV[5])
    local rounds = 0
    if now < endsAt then
      rounds = 1 + math.floor((endsAt - 1 - now) / cycle)
    end
    local reach = frontier + (math.max(0, free) + held + unpaid) * rounds
    if cutoff < 0 or reach < cutoff then
      cutoff = reach
    end
  end
  redis.call("HSET", KEYS[4], "frontier", frontier, "cutoff", cutoff, "held", held)
  if frontier ~= tonumber(state[1] or "0") or cutoff ~= tonumber(state[2] or "-1") then
    redis.call("HSET", KEYS[4], "v", journal("r"))
  end
  freeNow = free
  -- a room rebuilt after a loss does not know what its earlier admissions still take: nothing is free
  -- for a verdict (will_get) until they have run out
  if now < tonumber(roomFlags[2] or "0") then
    freeNow = math.min(free, 0)
  end
end

local ticket = ""
if ARGV[7] ~= "" then
  ticket = redis.call("HGET", KEYS[5], ARGV[7]) or ""
end
local length = redis.call("LLEN", KEYS[6]) + redis.call("LLEN", KEYS[7])
return {1, ticket, frontier, cutoff, freeNow, held, remaining, sealed and 1 or 0, length, admittedNow,
  pausedAt or -1, seq or tonumber(redis.call("HGET", KEYS[4], "seq") or "0"),
  tonumber(redis.call("HGET", KEYS[4], "gen") or "0"), tonumber(redis.call("HGET", KEYS[4], "recorded") or "0")}
