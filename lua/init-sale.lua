--[[
  init-sale: preheat a sale's metadata and stock, once. A retried create never overwrites a sale
  that is already selling.

  KEYS[1]  meta   hash
  KEYS[2]  stock  string

  ARGV     field/value pairs for meta; must include "stock" (the initial stock)

  Returns the code:
    1   OK (the sale was initialised)
    20  ALREADY_EXISTS (nothing changed)
  Codes are named as in src/stock/codes.ts (ScriptCode), one table for every script.
]]
if redis.call("EXISTS", KEYS[1]) == 1 then
  return 20
end
local stock = nil
for i = 1, #ARGV, 2 do
  if ARGV[i] == "stock" then
    stock = ARGV[i + 1]
  end
end
redis.call("HSET", KEYS[1], unpack(ARGV))
redis.call("SET", KEYS[2], stock)
return 1
