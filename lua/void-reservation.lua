--[[
  void-reservation: make "nothing was reserved" true for a buy attempt whose outcome the server never
  learned (every run of it went unanswered for the whole resolve window, so the shopper is told 503).
  Runs once from the buy route at its deadline and, when Redis does not answer that either, from the
  QStash job /api/jobs/void-reservation, as often as it takes: every call after the first changes nothing.

  - No reservation under this order id: a restore entry "x:<orderId>" (`reason = "void"`,
    `counted = false`) is written as a tombstone. reserve-stock.lua reads "r:" and "x:" of the order id
    in its first command, so a run of the attempt still in flight that arrives later is refused (code
    11) and reserves nothing; debit-stock.lua never counts an order with an "x:" entry.
  - A reservation that is not claimed: given back exactly as restore-stock.lua gives back a cancelled
    order (stock, holding, "x:" entry, queued document and outbox entry removed), and the
    Idempotency-Key's stored answer is dropped when it is this reservation (a keyed retry buys afresh).
    The caller then records the order in Postgres as cancelled and restored (src/buy/void-attempt.ts).
  - A claimed reservation is left alone. A keyed retry that got this reservation back as a replay told
    the shopper its order id (reserve-stock.lua marks the entry `claimed`): it is the shopper's order.
    Entries written by a rebuild or a late count (`rebuilt`, `kept`, `late`) may have lost that mark, so
    they count as claimed too: such an order is in Postgres and ends by its payment window.
  - "x:<orderId>" already there (voided, cancelled or expired before): nothing changes.
  - A drop of several variants (its meta "variants" lists more than one) gets each line of the
    reservation entry's `items` back in its variant (KEYS[8]) and off the shopper's holding of it
    (KEYS[9], a field reaching 0 deleted), in the same step. A void only concerns a reservation this
    Redis wrote (reserve-stock.lua, which records the lines); without KEYS[8] only the totals move.

  KEYS[1]  meta      hash (must exist: giving units back to an uninitialised sale would invent stock)
  KEYS[2]  stock     string: units remaining
  KEYS[3]  holdings  hash: userId -> units held in live orders
  KEYS[4]  ledger    hash: "r:<orderId>" reservation entry; "x:<orderId>" restore entry (written here)
  KEYS[5]  orders    hash: orderId -> queued order document (removed)
  KEYS[6]  outbox    zset: orderId (removed)
  KEYS[7]  idem      string: the attempt's Idempotency-Key answer; unused when ARGV[5] == "0"
  KEYS[8]  vstock    hash: variantId -> units remaining (optional: a drop of several variants)
  KEYS[9]  vholdings hash: "<variantId>:<userId>" -> units held in live orders (with KEYS[8])

  ARGV[1]  now (ms)
  ARGV[2]  orderId
  ARGV[3]  userId (for the tombstone; a reservation's own entry names its user)
  ARGV[4]  quantity (for the tombstone)
  ARGV[5]  "1" when the attempt carried an Idempotency-Key, else "0"

  Returns {code, entry} (entry: the reservation entry JSON, or "" when there was none):
    {1, entry}   OK: voided, the reservation's units and holding given back now
    {12, entry}  ALREADY_FINAL: an "x:" entry was there; nothing changed
    {2, ""}      NOT_INITIALISED: nothing changed (try again once the sale is rebuilt)
    {16, ""}     NOT_RESERVED: nothing was reserved; the tombstone is written
    {17, entry}  CLAIMED: the shopper holds this order; nothing changed
  Codes are named as in src/stock/codes.ts (ScriptCode), one table for every script.

  Ledger entry written (JSON; the type, its encoder and its parser are src/stock/ledger-entry.ts):
    "x:<orderId>"  {type = "restore", orderId, userId, quantity, before, after, at, reason = "void",
                   items}, with counted = false (before = after) for the tombstone of an order id never
                   reserved; `items` (the lines given back, [{variantId, quantity}]) only for a drop
]]
local orderId = ARGV[2]
local now = tonumber(ARGV[1])

if redis.call("EXISTS", KEYS[1]) == 0 then
  return {2, ""}
end
local seen = redis.call("HMGET", KEYS[4], "r:" .. orderId, "x:" .. orderId)
local raw = seen[1]
local entry = raw and cjson.decode(raw) or nil
if entry and (entry.claimed or entry.rebuilt or entry.kept or entry.late) then
  return {17, raw}
end
if seen[2] then
  return {12, raw or ""}
end

local remaining = tonumber(redis.call("GET", KEYS[2]) or "0")
if not entry then
  redis.call("HSET", KEYS[4], "x:" .. orderId, cjson.encode({
    type = "restore", orderId = orderId, userId = ARGV[3], quantity = tonumber(ARGV[4]),
    before = remaining, after = remaining, at = now, reason = "void", counted = false
  }))
  return {16, ""}
end

local quantity = tonumber(entry.quantity)
local after = redis.call("INCRBY", KEYS[2], quantity)
if redis.call("HINCRBY", KEYS[3], entry.userId, -quantity) <= 0 then
  redis.call("HDEL", KEYS[3], entry.userId)
end
local given = nil
local defined = KEYS[8] and redis.call("HGET", KEYS[1], "variants")
if defined and #cjson.decode(defined) > 1 and type(entry.items) == "table" then
  given = {}
  for i, line in ipairs(entry.items) do
    local units = tonumber(line.quantity)
    local field = line.variantId .. ":" .. entry.userId
    redis.call("HINCRBY", KEYS[8], line.variantId, units)
    if redis.call("HINCRBY", KEYS[9], field, -units) <= 0 then
      redis.call("HDEL", KEYS[9], field)
    end
    given[i] = {variantId = line.variantId, quantity = units}
  end
end
redis.call("HSET", KEYS[4], "x:" .. orderId, cjson.encode({
  type = "restore", orderId = orderId, userId = entry.userId, quantity = quantity,
  before = remaining, after = after, at = now, reason = "void", items = given
}))
redis.call("HDEL", KEYS[5], orderId)
redis.call("ZREM", KEYS[6], orderId)
if ARGV[5] == "1" then
  local first = redis.call("GET", KEYS[7])
  if first then
    local answer = cjson.decode(first)
    if answer[1] == 1 and answer[2] == orderId then
      redis.call("DEL", KEYS[7])
    end
  end
end
return {1, raw}
