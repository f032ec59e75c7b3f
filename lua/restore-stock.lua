--[[
  restore-stock: give an expired or cancelled order's units back to the stock and to the user's
  allowance, exactly once. The ledger entry "x:<orderId>" is the guard: a second call is a no-op.
  Only an order this Redis holds a reservation entry "r:<orderId>" for is restored: after a rebuild
  from Postgres (rebuild-sale.lua) an order that was never counted here has nothing to give back. Its
  "x:<orderId>" entry is written all the same (marked `counted = false`): the order is final, so an
  order write that arrives later must not count it here (debit-stock.lua skips orders with one).

  A drop of several variants (its meta "variants" lists more than one) also gives each line's units
  back to its variant (KEYS[7]) and takes them off the shopper's holding of that variant (KEYS[8], a
  field reaching 0 is deleted), in the same step and under the same "x:" guard. The lines are the
  reservation entry's own `items` (what this Redis counted); an entry without them (a rebuild's from
  before variants) takes the caller's, ARGV[6..]. A sale of one variant keeps no such state: lines are
  then ignored.

  KEYS[1]  meta      hash (must exist: restoring into an uninitialised sale would invent stock)
  KEYS[2]  stock     string: units remaining
  KEYS[3]  holdings  hash: userId -> units held in live orders
  KEYS[4]  ledger    hash: "r:<orderId>" must exist; "x:<orderId>" -> restore entry (JSON)
  KEYS[5]  orders    hash: orderId -> queued order document (removed: the order is final)
  KEYS[6]  outbox    zset: orderId (removed: nothing left to publish)
  KEYS[7]  vstock    hash: variantId -> units remaining (optional: a drop of several variants)
  KEYS[8]  vholdings hash: "<variantId>:<userId>" -> units held in live orders (with KEYS[7])

  ARGV[1]  now (ms)
  ARGV[2]  orderId
  ARGV[3]  userId
  ARGV[4]  quantity
  ARGV[5]  reason ("expired" | "cancelled" | ...)
  ARGV[6]  n, the order's lines (optional; 0 or absent: none), then ARGV[7..] n pairs: variantId,
           quantity (the order's lines as Postgres holds them; their quantities add up to ARGV[4])

  Returns {code, remaining}:
    {1, remaining}   OK (restored)
    {12, remaining}  ALREADY_FINAL (restored before; nothing changed)
    {2, 0}           NOT_INITIALISED (nothing changed)
    {16, remaining}  NOT_RESERVED here (nothing to give back; only the "x:" entry written)
  Codes are named as in src/stock/codes.ts (ScriptCode), one table for every script.

  Ledger entry written (JSON; the type, its encoder and its parser are src/stock/ledger-entry.ts):
    "x:<orderId>"  {type = "restore", orderId, userId, quantity, before, after, at, reason, items}, with
                   counted = false (before = after) when the order was not reserved here; `items` (a
                   drop's lines given back, [{variantId, quantity}]) only when given back per variant
]]
local orderId = ARGV[2]
local userId = ARGV[3]
local quantity = tonumber(ARGV[4])

if redis.call("EXISTS", KEYS[1]) == 0 then
  return {2, 0}
end
if redis.call("HEXISTS", KEYS[4], "x:" .. orderId) == 1 then
  return {12, tonumber(redis.call("GET", KEYS[2]) or "0")}
end
if redis.call("HEXISTS", KEYS[4], "r:" .. orderId) == 0 then
  local remaining = tonumber(redis.call("GET", KEYS[2]) or "0")
  redis.call("HSET", KEYS[4], "x:" .. orderId, cjson.encode({
    type = "restore", orderId = orderId, userId = userId, quantity = quantity,
    before = remaining, after = remaining, at = tonumber(ARGV[1]), reason = ARGV[5], counted = false
  }))
  redis.call("HDEL", KEYS[5], orderId)
  redis.call("ZREM", KEYS[6], orderId)
  return {16, remaining}
end

-- a drop's lines: the reservation entry's, else the caller's; nil for a sale of one variant
local function variantLines()
  if not KEYS[7] then
    return nil
  end
  local defined = redis.call("HGET", KEYS[1], "variants")
  if not defined or #cjson.decode(defined) < 2 then
    return nil
  end
  local entry = cjson.decode(redis.call("HGET", KEYS[4], "r:" .. orderId))
  if type(entry.items) == "table" and #entry.items > 0 then
    return entry.items
  end
  local lines = {}
  for i = 1, tonumber(ARGV[6] or "0") or 0 do
    lines[i] = {variantId = ARGV[5 + 2 * i], quantity = tonumber(ARGV[6 + 2 * i])}
  end
  if #lines == 0 then
    return nil
  end
  return lines
end

local lines = variantLines()
local before = tonumber(redis.call("GET", KEYS[2]) or "0")
local after = redis.call("INCRBY", KEYS[2], quantity)
local held = redis.call("HINCRBY", KEYS[3], userId, -quantity)
if held <= 0 then
  redis.call("HDEL", KEYS[3], userId)
end
local given = nil
if lines then
  given = {}
  for i, line in ipairs(lines) do
    local units = tonumber(line.quantity)
    local field = line.variantId .. ":" .. userId
    redis.call("HINCRBY", KEYS[7], line.variantId, units)
    if redis.call("HINCRBY", KEYS[8], field, -units) <= 0 then
      redis.call("HDEL", KEYS[8], field)
    end
    given[i] = {variantId = line.variantId, quantity = units}
  end
end
redis.call("HSET", KEYS[4], "x:" .. orderId, cjson.encode({
  type = "restore", orderId = orderId, userId = userId, quantity = quantity,
  before = before, after = after, at = tonumber(ARGV[1]), reason = ARGV[5], items = given
}))
redis.call("HDEL", KEYS[5], orderId)
redis.call("ZREM", KEYS[6], orderId)
return {1, after}
