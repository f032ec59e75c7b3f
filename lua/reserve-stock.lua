--[[
  reserve-stock: one buy attempt, atomically. The only Redis command an admitted buy attempt costs.

  Checks, in the contract's order (the first that applies is the answer):
    the same order id voided or restored ("x:" entry; see
      void-reservation.lua: the server gave the attempt up)    -> VOIDED (nothing reserved)
    the same order id already reserved (the server re-running
      an attempt whose outcome it did not learn)               -> that reservation, as a replay
    sale not initialised (meta missing)                        -> NOT_INITIALISED
    per-user / per-IP fixed-window rate limits                 -> RATE_LIMITED (never stored as an answer)
    replay of the same Idempotency-Key                         -> the first answer, unchanged (a
                                                                  reservation answered again is marked
                                                                  `claimed` in its ledger entry: the
                                                                  shopper knows it, no void takes it)
    sale window, operator's pause flag                         -> NOT_STARTED / ENDED / PAUSED
    a rebuild's quiet period (meta recoveringUntil)            -> RESTORING (never stored as an answer)
    per-user allowance                                         -> ALREADY_PURCHASED / LIMIT_EXCEEDED
    stock                                                      -> INSUFFICIENT_STOCK / SOLD_OUT
  then decrements the stock, records the user's holding, writes a ledger entry (seed 003), the order
  document and an outbox entry for the order pipeline, and counts the outcome in the sale's timeline.

  KEYS[1]  meta      hash: startsAt, endsAt (ms), paused ("0"/"1": an operator's pause), perUserLimit,
                     paymentWindowMs, epoch (Redis generation, see rebuild-sale.lua), recoveringUntil (ms:
                     a rebuild's quiet period, not an operator's pause; nobody buys until then),
                     variantCount (a sale made with variants; absent: one)
  KEYS[2]  stock     string: units remaining
  KEYS[3]  holdings  hash: userId -> units held in live orders
  KEYS[4]  ledger    hash: "r:<orderId>" -> reservation entry (JSON); "x:<orderId>" -> restore entry
                     (read; written by a re-run's refusal)
  KEYS[5]  orders    hash: orderId -> queued order document (JSON)
  KEYS[6]  outbox    zset: orderId -> time (ms) the order was reserved
  KEYS[7]  idem      string: the first answer for (user, Idempotency-Key); unused when ARGV[5] == "0"
  KEYS[8]  rlUser    string: attempts by this user in the current window
  KEYS[9]  rlIp      string: attempts from this IP in the current window
  KEYS[10] timeline  hash: "<unix second>:<code>" -> count (the operator's live chart)
  KEYS[11] vstock    hash: variantId -> units remaining (a drop of several variants; ARGV[14] == "1")
  KEYS[12] vholdings hash: "<variantId>:<userId>" -> units held in live orders (idem)

  ARGV[1]  now (ms, the caller's clock; nothing here reads the clock)
  ARGV[2]  orderId (fresh for each attempt; a retry of the same attempt reuses it)
  ARGV[3]  userId
  ARGV[4]  quantity (integer >= 1, validated by the caller)
  ARGV[5]  "1" when an Idempotency-Key was given, else "0"
  ARGV[6]  idempotency TTL (seconds)
  ARGV[7]  per-user attempts per window
  ARGV[8]  per-IP attempts per window
  ARGV[9]  window length (ms)
  ARGV[10] timeline TTL (seconds)
  ARGV[11] "1" when the server runs this attempt again after a run got no reply, else "0" (or absent)
  ARGV[12] the units this shopper's admission holds (queue and draw sales; src/room/), when lower
           than perUserLimit: the allowance is then that (absent for an open sale); -1 when the shopper
           has no valid admission (lapsed, say) and sent an Idempotency-Key: only that key's first
           answer may be given back (a 202 whose answer was lost), else NOT_ADMITTED; "" when neither
  ARGV[13] n, the cart's lines (0 or absent: a caller from before variants; the documents carry no items)
  ARGV[14] "1" when the sale keeps units per variant (KEYS[11], KEYS[12]): a drop of several variants
  ARGV[15..] per line, 4 values: variantId, quantity (>= 1), unit price (cents), the variant's own cap
           per shopper (0: none). ARGV[4] is the sum of the quantities. Each variant at most once (the
           caller checks).

  A re-run's refusal (codes 3 to 10, and 22) is final for the order id: it writes the "x:<orderId>" marker a
  void writes (reason "void", counted false), so an earlier run of the same attempt that is still on
  its way and lands later (after a resume, a new rate-limit window, units coming back) reserves nothing
  (code 11) behind the refusal the shopper was given.

  Returns an array whose first element is the code (src/stock/reserve.ts maps them; the names
  are src/stock/codes.ts's, one table for every script):
    {1, orderId, quantity, expiresAtMs, remaining, epoch}        OK: reserved now
    {1, orderId, quantity, expiresAtMs, remaining, epoch, 1, pending}
                                                     OK: reserved earlier (a replay; `remaining` is the
                                                     first answer's, 0 when a rebuild wrote the entry);
                                                     pending 1 while the order is still in the outbox
                                                     (not yet written), else 0
    {2}                                              NOT_INITIALISED (also: a drop of several variants
                                                     called without its per-variant lines)
    {3, retryAfterMs}                                RATE_LIMITED
    {4}                                              NOT_STARTED
    {5}                                              ENDED
    {6}                                              PAUSED
    {7, held}                                        ALREADY_PURCHASED
    {8, mayStillBuy}                                 LIMIT_EXCEEDED
    {9, remaining}                                   INSUFFICIENT_STOCK
    {9, remaining, 0, short}                         INSUFFICIENT_STOCK of a drop of several variants:
                                                     `remaining` the sale's, `short` a JSON array of
                                                     {variantId, remaining} for every line asking more
                                                     than its variant has
    {10}                                             SOLD_OUT (every line's variant has nothing left)
    {code, payload or 0, 1, short}                   a refusal (4 to 10) given again to the same
                                                     Idempotency-Key: the first answer's code and
                                                     payload, then 1 (a replay: it says nothing about
                                                     the sale now), then its short lines if any
    {11}                                             VOIDED: this order id was voided (or is final);
                                                     nothing reserved, nothing stored as an answer
    {22, retryAfterMs}                               RESTORING: the sale is in a rebuild's quiet period
                                                     (not paused by an operator); nothing reserved,
                                                     nothing stored as an answer (a retry with the same
                                                     key after the quiet period buys)
    {25}                                             NOT_ADMITTED (ARGV[12] = -1): the key has no first
                                                     answer; nothing counted, nothing stored

  Ledger entries written (JSON; the type, its encoder and its parser are src/stock/ledger-entry.ts):
    "r:<orderId>"  {type = "reserve", orderId, userId, quantity, before, after, at, expiresAt, epoch,
                   items}; a keyed replay that returns the reservation adds claimed = true; `items`
                   (with ARGV[13] >= 1) the lines: [{variantId, quantity, priceCents}]; the queued order
                   document carries them too
    "x:<orderId>"  {type = "restore", orderId, userId, quantity, before, after, at, reason = "void",
                   counted = false} (before = after = remaining): a re-run's refusal
]]
local now = tonumber(ARGV[1])
local orderId = ARGV[2]
local userId = ARGV[3]
local quantity = tonumber(ARGV[4])
local hasIdem = ARGV[5] == "1"
local rerun = ARGV[11] == "1"
local lineCount = tonumber(ARGV[13] or "0") or 0
local perVariant = ARGV[14] == "1"

local function fence()
  if rerun then
    local remaining = tonumber(redis.call("GET", KEYS[2]) or "0")
    redis.call("HSET", KEYS[4], "x:" .. orderId, cjson.encode({
      type = "restore", orderId = orderId, userId = userId, quantity = quantity,
      before = remaining, after = remaining, at = now, reason = "void", counted = false
    }))
  end
end

local function count(code)
  local field = math.floor(now / 1000) .. ":" .. code
  if redis.call("HINCRBY", KEYS[10], field, 1) == 1 then
    redis.call("EXPIRE", KEYS[10], tonumber(ARGV[10]), "NX")
  end
end

local function answer(result)
  count(result[1])
  if result[1] ~= 1 then
    fence()
  end
  if hasIdem then
    redis.call("SET", KEYS[7], cjson.encode(result), "EX", tonumber(ARGV[6]))
  end
  return result
end

local function replayed(result)
  result[7] = 1
  result[8] = redis.call("ZSCORE", KEYS[6], result[2]) and 1 or 0
  return result
end

local seen = redis.call("HMGET", KEYS[4], "r:" .. orderId, "x:" .. orderId)
if seen[2] then
  return {11}
end
if seen[1] then
  local entry = cjson.decode(seen[1])
  -- entries a rebuild wrote (rebuild-sale.lua) have no "after": a nil would cut the reply short here
  return replayed({1, orderId, entry.quantity, entry.expiresAt, entry.after or 0, entry.epoch or 1})
end

-- no valid admission: the only answer this attempt may get is its key's first one (given below)
if ARGV[12] == "-1" and not (hasIdem and redis.call("EXISTS", KEYS[7]) == 1) then
  return {25}
end

local meta = redis.call("HMGET", KEYS[1], "startsAt", "endsAt", "paused", "perUserLimit", "paymentWindowMs", "epoch",
  "recoveringUntil", "variantCount")
if not meta[1] then
  return {2}
end
-- a caller that names no variant on a drop of several (it read the sale before it was there): the lines
-- cannot be checked, so nothing is taken; answered as a sale not yet in place (the caller retries)
if not perVariant and tonumber(meta[8] or "1") > 1 then
  return {2}
end

local function overLimit(key, limit)
  local n = redis.call("INCR", key)
  if n == 1 then
    redis.call("PEXPIRE", key, tonumber(ARGV[9]))
  end
  if n > limit then
    local ttl = redis.call("PTTL", key)
    if ttl < 0 then
      redis.call("PEXPIRE", key, tonumber(ARGV[9]))
      ttl = tonumber(ARGV[9])
    end
    return ttl
  end
  return nil
end

local wait = overLimit(KEYS[8], tonumber(ARGV[7])) or overLimit(KEYS[9], tonumber(ARGV[8]))
if wait then
  count(3)
  fence()
  return {3, wait}
end

if hasIdem then
  local first = redis.call("GET", KEYS[7])
  if first then
    local result = cjson.decode(first)
    if result[1] == 1 then
      local reserved = redis.call("HGET", KEYS[4], "r:" .. result[2])
      if reserved then
        local entry = cjson.decode(reserved)
        if not entry.claimed then
          entry.claimed = true
          redis.call("HSET", KEYS[4], "r:" .. result[2], cjson.encode(entry))
        end
      end
      return replayed(result)
    end
    -- a refusal given again says nothing about the sale now (its units may have come back since)
    fence()
    return {result[1], result[2] or 0, 1, result[4]}
  end
end

if now < tonumber(meta[1]) then
  return answer({4})
end
if now >= tonumber(meta[2]) then
  return answer({5})
end
if meta[3] == "1" then
  return answer({6})
end
local recoveringUntil = tonumber(meta[7] or "0")
if now < recoveringUntil then
  count(22)
  fence()
  return {22, recoveringUntil - now}
end

local limit = tonumber(meta[4])
local admitted = tonumber(ARGV[12] or "")
if admitted and admitted < limit then
  limit = admitted
end
local held = tonumber(redis.call("HGET", KEYS[3], userId) or "0")
if held >= limit then
  return answer({7, held})
end
if held + quantity > limit then
  return answer({8, limit - held})
end

-- the cart's lines: {variantId, quantity, priceCents, cap}
local lines = {}
for i = 1, lineCount do
  local at = 15 + (i - 1) * 4
  lines[i] = {ARGV[at], tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3])}
end

local before = tonumber(redis.call("GET", KEYS[2]) or "0")
if perVariant then
  -- each variant's own cap, then each variant's units; every line or none
  for _, line in ipairs(lines) do
    -- a variant without a cap of its own (0) needs no read of what the shopper holds of it
    if line[4] > 0 then
      local heldOfVariant = tonumber(redis.call("HGET", KEYS[12], line[1] .. ":" .. userId) or "0")
      if heldOfVariant + line[2] > line[4] then
        return answer({8, math.max(0, line[4] - heldOfVariant)})
      end
    end
  end
  local short = {}
  local gone = 0
  for i, line in ipairs(lines) do
    local left = tonumber(redis.call("HGET", KEYS[11], line[1]) or "0")
    if left < line[2] then
      short[#short + 1] = {variantId = line[1], remaining = math.max(0, left)}
      if left <= 0 then
        gone = gone + 1
      end
    end
  end
  if gone == #lines then
    return answer({10})
  end
  if #short > 0 then
    return answer({9, math.max(0, before), 0, cjson.encode(short)})
  end
else
  if before <= 0 then
    return answer({10})
  end
  if before < quantity then
    return answer({9, before})
  end
end

local after = redis.call("DECRBY", KEYS[2], quantity)
redis.call("HINCRBY", KEYS[3], userId, quantity)
local items = nil
if lineCount > 0 then
  items = {}
  for i, line in ipairs(lines) do
    items[i] = {variantId = line[1], quantity = line[2], priceCents = line[3]}
    if perVariant then
      redis.call("HINCRBY", KEYS[11], line[1], -line[2])
      redis.call("HINCRBY", KEYS[12], line[1] .. ":" .. userId, line[2])
    end
  end
end
local expiresAt = now + tonumber(meta[5])
local epoch = tonumber(meta[6] or "1")
redis.call("HSET", KEYS[4], "r:" .. orderId, cjson.encode({
  type = "reserve", orderId = orderId, userId = userId, quantity = quantity,
  before = before, after = after, at = now, expiresAt = expiresAt, epoch = epoch, items = items
}))
redis.call("HSET", KEYS[5], orderId, cjson.encode({
  orderId = orderId, userId = userId, quantity = quantity, createdAt = now, expiresAt = expiresAt, epoch = epoch,
  items = items
}))
redis.call("ZADD", KEYS[6], now, orderId)
return answer({1, orderId, quantity, expiresAt, after, epoch})
