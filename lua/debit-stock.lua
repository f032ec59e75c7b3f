--[[
  debit-stock: count in this Redis an order that reached Postgres after the sale was rebuilt from
  Postgres (its reservation was made in a Redis that was lost, and its order write was still in
  flight). Exactly once: a reservation entry "r:<orderId>" means the order is already counted.

  KEYS[1]  meta      hash: field "epoch" must equal ARGV[5]
  KEYS[2]  stock     string: units remaining
  KEYS[3]  holdings  hash: userId -> units held in live orders
  KEYS[4]  ledger    hash: "r:<orderId>" -> reservation entry (JSON)

  ARGV[1]  now (ms)
  ARGV[2]  orderId
  ARGV[3]  userId
  ARGV[4]  quantity
  ARGV[5]  the sale's epoch in Postgres (the generation this Redis must be)

  Returns {code, remaining}:
    {1, remaining}  DEBITED (remaining may be negative: the rebuild sold units this order held;
                    reconciliation reports the drift and pauses the sale)
    {2, remaining}  ALREADY_COUNTED (nothing changed)
    {3, 0}          NOT_INITIALISED (nothing changed; try again after the rebuild)
    {4, 0}          OTHER_EPOCH (nothing changed; try again)
]]
local meta = redis.call("HMGET", KEYS[1], "epoch")
if not meta[1] then
  return {3, 0}
end
if meta[1] ~= ARGV[5] then
  return {4, 0}
end
local orderId = ARGV[2]
if redis.call("HEXISTS", KEYS[4], "r:" .. orderId) == 1 then
  return {2, tonumber(redis.call("GET", KEYS[2]) or "0")}
end
local quantity = tonumber(ARGV[4])
local before = tonumber(redis.call("GET", KEYS[2]) or "0")
local after = redis.call("DECRBY", KEYS[2], quantity)
redis.call("HINCRBY", KEYS[3], ARGV[3], quantity)
redis.call("HSET", KEYS[4], "r:" .. orderId, cjson.encode({
  type = "reserve", orderId = orderId, userId = ARGV[3], quantity = quantity,
  before = before, after = after, at = tonumber(ARGV[1]), epoch = tonumber(ARGV[5]), late = true
}))
return {1, after}
