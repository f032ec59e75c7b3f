--[[
  init-sale: preheat a sale's metadata and stock, once. A retried create never overwrites a sale
  that is already selling.

  KEYS[1]  meta    hash
  KEYS[2]  stock   string
  KEYS[3]  vstock  hash: variantId -> units (a drop of several variants only; absent for a sale of one)

  ARGV     with KEYS[3]: ARGV[1] the variants' units, a JSON object variantId -> units, then the pairs;
           the pairs: field/value pairs for meta; must include "stock" (the initial stock)

  Returns the code:
    1   OK (the sale was initialised)
    20  ALREADY_EXISTS (nothing changed)
  Codes are named as in src/stock/codes.ts (ScriptCode), one table for every script.
]]
if redis.call("EXISTS", KEYS[1]) == 1 then
  return 20
end
local first = 1
if KEYS[3] then
  first = 2
  local units = cjson.decode(ARGV[1])
  for variantId, n in pairs(units) do
    redis.call("HSET", KEYS[3], variantId, n)
  end
end
local stock = nil
local fields = {}
for i = first, #ARGV, 2 do
  if ARGV[i] == "stock" then
    stock = ARGV[i + 1]
  end
  fields[#fields + 1] = ARGV[i]
  fields[#fields + 1] = ARGV[i + 1]
end
redis.call("HSET", KEYS[1], unpack(fields))
redis.call("SET", KEYS[2], stock)
return 1
