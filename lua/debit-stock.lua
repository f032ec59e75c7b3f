--[[
  debit-stock: make sure this Redis counts orders that reached Postgres. An order's reservation entry
  "r:<orderId>" means it is counted (the common case: nothing to do). Without one, this Redis lost the
  reservation (it came back empty and was rebuilt, or a replica that was behind took over) and the
  order, which the shopper was told about, is counted now: stock, holding and ledger entry, once.
  An order with a restore entry "x:<orderId>" is final (cancelled or expired, restored or marked by
  restore-stock.lua while this Redis did not count it) and is never counted again.
  On a drop of several variants (its meta "variants" lists more than one), an order counted now is
  counted per line too: each variant's units (KEYS[5]) and the shopper's holding of it (KEYS[6]).

  Two call shapes: with KEYS[5] and KEYS[6], ARGV[3..] are quadruples (orderId, userId, quantity,
  lines), `lines` the order's lines as JSON, [{variantId, quantity, priceCents}] ("" when unknown);
  without them, triples (orderId, userId, quantity), as before variants.

  KEYS[1]  meta      hash: field "epoch" (absent means 1) must equal ARGV[2]
  KEYS[2]  stock     string: units remaining
  KEYS[3]  holdings  hash: userId -> units held in live orders
  KEYS[4]  ledger    hash: "r:<orderId>" -> reservation entry (JSON); "x:<orderId>" -> restore entry
  KEYS[5]  vstock    hash: variantId -> units remaining (optional)
  KEYS[6]  vholdings hash: "<variantId>:<userId>" -> units held in live orders (with KEYS[5])

  ARGV[1]  now (ms)
  ARGV[2]  the sale's epoch in Postgres (the generation this Redis must be)
  ARGV[3..] quadruples: orderId, userId, quantity, lines (with KEYS[5]); else triples, the same
            without lines

  Returns {code, remaining, debited}:
    {1, remaining, debited}  OK: `debited` orders were counted now (remaining may be negative: units
                             were sold twice while the reservation was missing; reconciliation reports
                             the drift and pauses the sale)
    {2, 0, 0}                NOT_INITIALISED (nothing changed; try again after the rebuild)
    {18, 0, 0}               OTHER_EPOCH (nothing changed; try again)
  Codes are named as in src/stock/codes.ts (ScriptCode), one table for every script.

  Ledger entry written (JSON; the type, its encoder and its parser are src/stock/ledger-entry.ts):
    "r:<orderId>"  {type = "reserve", orderId, userId, quantity, before, after, at, epoch,
                   late = true, items} (no expiresAt: the order's payment window is Postgres's; `items`
                   the order's lines when given, so that its restore gives them back per variant)
]]
if redis.call("EXISTS", KEYS[1]) == 0 then
  return {2, 0, 0}
end
if (redis.call("HGET", KEYS[1], "epoch") or "1") ~= ARGV[2] then
  return {18, 0, 0}
end
local step = 3
local perVariant = false
if KEYS[5] then
  step = 4
  local defined = redis.call("HGET", KEYS[1], "variants")
  perVariant = defined and #cjson.decode(defined) > 1
end
local debited = 0
for i = 3, #ARGV, step do
  local orderId = ARGV[i]
  if redis.call("HEXISTS", KEYS[4], "r:" .. orderId) == 0 and redis.call("HEXISTS", KEYS[4], "x:" .. orderId) == 0 then
    local userId = ARGV[i + 1]
    local quantity = tonumber(ARGV[i + 2])
    local items = nil
    if step == 4 and ARGV[i + 3] ~= "" then
      items = {}
      for j, line in ipairs(cjson.decode(ARGV[i + 3])) do
        items[j] = {variantId = line.variantId, quantity = tonumber(line.quantity), priceCents = tonumber(line.priceCents)}
        if perVariant then
          redis.call("HINCRBY", KEYS[5], line.variantId, -items[j].quantity)
          redis.call("HINCRBY", KEYS[6], line.variantId .. ":" .. userId, items[j].quantity)
        end
      end
    end
    local before = tonumber(redis.call("GET", KEYS[2]) or "0")
    local after = redis.call("DECRBY", KEYS[2], quantity)
    redis.call("HINCRBY", KEYS[3], userId, quantity)
    redis.call("HSET", KEYS[4], "r:" .. orderId, cjson.encode({
      type = "reserve", orderId = orderId, userId = userId, quantity = quantity,
      before = before, after = after, at = tonumber(ARGV[1]), epoch = tonumber(ARGV[2]), late = true,
      items = items
    }))
    debited = debited + 1
  end
end
return {1, tonumber(redis.call("GET", KEYS[2]) or "0"), debited}
