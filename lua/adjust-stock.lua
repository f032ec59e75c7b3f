--[[
  adjust-stock: an operator adds or removes units while the sale runs. Never below zero remaining:
  units already reserved stay reserved.

  KEYS[1]  meta    hash: field "stock" = initial stock + all adjustments
  KEYS[2]  stock   string: units remaining
  KEYS[3]  ledger  hash: "a:<adjustmentId>" -> adjustment entry (JSON); also the idempotency guard

  ARGV[1]  now (ms)
  ARGV[2]  adjustmentId
  ARGV[3]  delta (integer, may be negative)

  Returns {code, remaining, stock}:
    {1, remaining, stock}  ADJUSTED
    {2, remaining, stock}  ALREADY_APPLIED (same adjustment id; nothing changed)
    {3, remaining, stock}  BELOW_RESERVED (delta would take remaining below zero; nothing changed)
    {4, 0, 0}              NOT_INITIALISED
]]
local delta = tonumber(ARGV[3])
if redis.call("EXISTS", KEYS[1]) == 0 then
  return {4, 0, 0}
end
local remaining = tonumber(redis.call("GET", KEYS[2]) or "0")
local stock = tonumber(redis.call("HGET", KEYS[1], "stock") or "0")
if redis.call("HEXISTS", KEYS[3], "a:" .. ARGV[2]) == 1 then
  return {2, remaining, stock}
end
if remaining + delta < 0 then
  return {3, remaining, stock}
end
local after = redis.call("INCRBY", KEYS[2], delta)
local total = redis.call("HINCRBY", KEYS[1], "stock", delta)
redis.call("HSET", KEYS[3], "a:" .. ARGV[2], cjson.encode({
  type = "adjust", adjustmentId = ARGV[2], delta = delta, before = remaining, after = after, at = tonumber(ARGV[1])
}))
return {1, after, total}
