--[[
  restore-stock: give an expired or cancelled order's units back to the stock and to the user's
  allowance, exactly once. The ledger entry "x:<orderId>" is the guard: a second call is a no-op.
  Only an order this Redis holds a reservation entry "r:<orderId>" for is restored: after a rebuild
  from Postgres (rebuild-sale.lua) an order that was never counted here has nothing to give back. Its
  "x:<orderId>" entry is written all the same (marked `counted = false`): the order is final, so an
  order write that arrives later must not count it here (debit-stock.lua skips orders with one).

  KEYS[1]  meta      hash (must exist: restoring into an uninitialised sale would invent stock)
  KEYS[2]  stock     string: units remaining
  KEYS[3]  holdings  hash: userId -> units held in live orders
  KEYS[4]  ledger    hash: "r:<orderId>" must exist; "x:<orderId>" -> restore entry (JSON)
  KEYS[5]  orders    hash: orderId -> queued order document (removed: the order is final)
  KEYS[6]  outbox    zset: orderId (removed: nothing left to publish)

  ARGV[1]  now (ms)
  ARGV[2]  orderId
  ARGV[3]  userId
  ARGV[4]  quantity
  ARGV[5]  reason ("expired" | "cancelled" | ...)

  Returns {code, remaining}:
    {1, remaining}   OK (restored)
    {12, remaining}  ALREADY_FINAL (restored before; nothing changed)
    {2, 0}           NOT_INITIALISED (nothing changed)
    {16, remaining}  NOT_RESERVED here (nothing to give back; only the "x:" entry written)
  Codes are named as in src/stock/codes.ts (ScriptCode), one table for every script.

  Ledger entry written (JSON; the type, its encoder and its parser are src/stock/ledger-entry.ts):
    "x:<orderId>"  {type = "restore", orderId, userId, quantity, before, after, at, reason}, with
                   counted = false (before = after) when the order was not reserved here
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

local before = tonumber(redis.call("GET", KEYS[2]) or "0")
local after = redis.call("INCRBY", KEYS[2], quantity)
local held = redis.call("HINCRBY", KEYS[3], userId, -quantity)
if held <= 0 then
  redis.call("HDEL", KEYS[3], userId)
end
redis.call("HSET", KEYS[4], "x:" .. orderId, cjson.encode({
  type = "restore", orderId = orderId, userId = userId, quantity = quantity,
  before = before, after = after, at = tonumber(ARGV[1]), reason = ARGV[5]
}))
redis.call("HDEL", KEYS[5], orderId)
redis.call("ZREM", KEYS[6], orderId)
return {1, after}
