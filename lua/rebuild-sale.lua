--[[
  rebuild-sale: replace a sale's Redis state with one computed from Postgres (after Redis lost its
  data, or on an operator's request). Everything the sale has in Redis is replaced in one step, so a
  reservation can never run against half a rebuild. The caller has already moved the sale to a new
  epoch in Postgres; a rebuild for an older epoch than the one present is refused.

  KEYS[1]  meta      hash (replaced; must include "epoch")
  KEYS[2]  stock     string: units remaining = stock - units in live orders
  KEYS[3]  holdings  hash: userId -> units held in live orders
  KEYS[4]  ledger    hash: "r:<orderId>" for every live order
  KEYS[5]  orders    hash: queued documents (cleared: every live order is in Postgres)
  KEYS[6]  outbox    zset (cleared)

  ARGV[1]  meta as JSON object of strings
  ARGV[2]  remaining
  ARGV[3]  holdings as JSON object userId -> units
  ARGV[4]  ledger entries as JSON object field -> JSON string

  Returns {1} REBUILT, or {2, currentEpoch} STALE (a newer rebuild is already in place; nothing changed).
]]
local meta = cjson.decode(ARGV[1])
local current = tonumber(redis.call("HGET", KEYS[1], "epoch") or "0")
if current > tonumber(meta.epoch) then
  return {2, current}
end
redis.call("DEL", KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6])
for field, value in pairs(meta) do
  redis.call("HSET", KEYS[1], field, value)
end
redis.call("SET", KEYS[2], ARGV[2])
for userId, units in pairs(cjson.decode(ARGV[3])) do
  redis.call("HSET", KEYS[3], userId, units)
end
for field, entry in pairs(cjson.decode(ARGV[4])) do
  redis.call("HSET", KEYS[4], field, entry)
end
return {1}
