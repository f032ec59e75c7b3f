--[[
  rebuild-sale: replace a sale's Redis state with one computed from Postgres (after Redis lost its
  data, or on an operator's request), in one step, so a reservation never runs against half a rebuild.
  The caller has already moved the sale to a new epoch in Postgres; a rebuild for an older epoch than
  the one present is refused.

  What the old Redis knows and the Postgres reading cannot is kept:
  - queued orders (KEYS[5]) with no entry in the new ledger: reservations whose order write has not
    reached Postgres (never published, in flight, or made while this rebuild read Postgres). They stay
    queued, in the outbox, and are counted (stock, holding, reservation entry) in the new state;
  - the restore entries ("x:<orderId>"): a later order write must not count a final order again. A
    restore of an order the new ledger counts as live happened after Postgres was read (the order was
    cancelled or expired since): its units are given back here, not counted again.
  - with ARGV[6] (the adjustment ids Postgres has recorded, read in the transaction that moved the
    epoch): the adjustment entries ("a:") Postgres has not recorded, applied here while their request
    failed before Postgres recorded them (or raced this rebuild). The stock from Postgres counts exactly
    the recorded ones; each kept one is added to the stock and the remaining, its entry moves to the new
    epoch (kept = true), and the caller records it in Postgres against that epoch (or the reconciliation
    does), so a retry of its id finds it applied. Without ARGV[6] no adjustment entry is kept.

  A drop of several variants (KEYS[7], KEYS[8] given) gets its variants' units and holdings from
  Postgres too (ARGV[7], ARGV[8]), and every correction above applies per variant as well: a kept queued
  order takes each of its lines (its document's items, else its old entry's) from its variant; a
  restore of an order the new ledger counts gives each line of that entry (else of the restore entry)
  back; a kept adjustment that names its variant (`variantId`) moves that variant's units. A sale of
  one variant keeps no per-variant state.

  KEYS[1]  meta      hash (replaced; must include "epoch")
  KEYS[2]  stock     string: units remaining
  KEYS[3]  holdings  hash: userId -> units held in live orders
  KEYS[4]  ledger    hash: "r:<orderId>" for every live order, plus the kept "x:" restore entries
  KEYS[5]  orders    hash: queued documents (kept when Postgres has not counted the order)
  KEYS[6]  outbox    zset (kept for the kept queued documents)
  KEYS[7]  vstock    hash: variantId -> units remaining (a drop of several variants only; replaced)
  KEYS[8]  vholdings hash: "<variantId>:<userId>" -> units held in live orders (with KEYS[7]; replaced)

  ARGV[1]  meta as JSON object of strings
  ARGV[2]  remaining by Postgres: stock - units in live orders
  ARGV[3]  holdings by Postgres, JSON object userId -> units
  ARGV[4]  reservation entries by Postgres, JSON object "r:<orderId>" -> JSON string
  ARGV[5]  orders Postgres holds as final (expired/cancelled) and this rebuild settled, JSON array of
           ids (optional): a queued document of one of them (its acknowledgement was lost) is dropped,
           never kept and counted, since nothing would give its units back if the follow-up never ran
  ARGV[6]  adjustment ids Postgres has recorded for the sale, JSON array (optional, "" as absent; see
           above)
  ARGV[7]  with KEYS[7]: each variant's remaining by Postgres (its stock - its units in live orders),
           JSON object variantId -> units
  ARGV[8]  with KEYS[7]: the variants' holdings by Postgres, JSON object "<variantId>:<userId>" -> units

  Returns:
    {1, orderId, document, ..., "a:<adjustmentId>", entry, ...}
                                 OK (rebuilt; each queued order kept, with its document, then each
                                 adjustment kept, its field and its new entry: order ids never start
                                 with "a:")
    {19, currentEpoch}           STALE (a newer rebuild is already in place; nothing changed)
  Codes are named as in src/stock/codes.ts (ScriptCode), one table for every script.

  Ledger entries written (JSON; the type, its encoder and its parser are src/stock/ledger-entry.ts):
  those of ARGV[4] (rebuilt = true, encoded by src/recovery/rebuild.ts), the kept "x:" entries
  unchanged, and per kept queued order its old reservation entry or, without one,
    "r:<orderId>"  {type = "reserve", orderId, userId, quantity, at, expiresAt, epoch, kept = true,
                   items} (from its queued document; at = the document's createdAt; items its lines)
]]
local meta = cjson.decode(ARGV[1])
local current = tonumber(redis.call("HGET", KEYS[1], "epoch") or "0")
if current > tonumber(meta.epoch) then
  return {19, current}
end
local remaining = tonumber(ARGV[2])
local holdings = cjson.decode(ARGV[3])
local ledger = cjson.decode(ARGV[4])
local function hold(userId, units)
  holdings[userId] = (tonumber(holdings[userId]) or 0) + units
end

-- a drop's units and holdings per variant: `sign` 1 takes an order's lines, -1 gives them back
local perVariant = KEYS[7] ~= nil
local vstock = perVariant and cjson.decode(ARGV[7]) or {}
local vholdings = perVariant and cjson.decode(ARGV[8]) or {}
local function holdLines(userId, items, sign)
  if not perVariant or type(items) ~= "table" then
    return
  end
  for _, line in ipairs(items) do
    local units = sign * tonumber(line.quantity)
    local field = line.variantId .. ":" .. userId
    vstock[line.variantId] = (tonumber(vstock[line.variantId]) or 0) - units
    vholdings[field] = (tonumber(vholdings[field]) or 0) + units
  end
end
local function itemsOf(json)
  local items = json and cjson.decode(json).items
  if type(items) == "table" and #items > 0 then
    return items
  end
  return nil
end

local recordedAdjustments = nil
if ARGV[6] and ARGV[6] ~= "" then
  recordedAdjustments = {}
  for _, id in ipairs(cjson.decode(ARGV[6])) do
    recordedAdjustments[id] = true
  end
end
local keptAdjustments = {}

local oldLedger = redis.call("HGETALL", KEYS[4])
local oldReservations = {}
for i = 1, #oldLedger, 2 do
  local field, entry = oldLedger[i], oldLedger[i + 1]
  local prefix = string.sub(field, 1, 2)
  if prefix == "r:" then
    oldReservations[field] = entry
  elseif prefix == "a:" and recordedAdjustments and not recordedAdjustments[string.sub(field, 3)] then
    local adjustment = cjson.decode(entry)
    local delta = tonumber(adjustment.delta)
    remaining = remaining + delta
    meta.stock = tostring(tonumber(meta.stock) + delta)
    if perVariant and type(adjustment.variantId) == "string" then
      vstock[adjustment.variantId] = (tonumber(vstock[adjustment.variantId]) or 0) + delta
    end
    adjustment.epoch = tonumber(meta.epoch)
    adjustment.kept = true
    ledger[field] = cjson.encode(adjustment)
    keptAdjustments[#keptAdjustments + 1] = field
  elseif prefix == "x:" then
    local live = ledger["r:" .. string.sub(field, 3)]
    if live then
      local restored = cjson.decode(entry)
      remaining = remaining + tonumber(restored.quantity)
      hold(restored.userId, -tonumber(restored.quantity))
      holdLines(restored.userId, itemsOf(live) or itemsOf(entry), -1)
    end
    ledger[field] = entry
  end
end

local settled = {}
for _, orderId in ipairs(cjson.decode((ARGV[5] and ARGV[5] ~= "") and ARGV[5] or "[]")) do
  settled[orderId] = true
end

local kept = {}
local docs = redis.call("HGETALL", KEYS[5])
for i = 1, #docs, 2 do
  local orderId, doc = docs[i], docs[i + 1]
  if not ledger["r:" .. orderId] and not ledger["x:" .. orderId] and not settled[orderId] then
    local order = cjson.decode(doc)
    local old = oldReservations["r:" .. orderId]
    local items = itemsOf(doc) or itemsOf(old)
    remaining = remaining - tonumber(order.quantity)
    hold(order.userId, tonumber(order.quantity))
    holdLines(order.userId, items, 1)
    ledger["r:" .. orderId] = old or cjson.encode({
      type = "reserve", orderId = orderId, userId = order.userId, quantity = order.quantity,
      at = order.createdAt, expiresAt = order.expiresAt, epoch = order.epoch, kept = true, items = items
    })
    kept[#kept + 1] = {orderId, doc, redis.call("ZSCORE", KEYS[6], orderId) or order.createdAt}
  end
end

redis.call("DEL", KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6])
if perVariant then
  redis.call("DEL", KEYS[7], KEYS[8])
  for variantId, units in pairs(vstock) do
    redis.call("HSET", KEYS[7], variantId, units)
  end
  for field, units in pairs(vholdings) do
    if tonumber(units) > 0 then
      redis.call("HSET", KEYS[8], field, units)
    end
  end
end
for field, value in pairs(meta) do
  redis.call("HSET", KEYS[1], field, value)
end
redis.call("SET", KEYS[2], remaining)
for userId, units in pairs(holdings) do
  if tonumber(units) > 0 then
    redis.call("HSET", KEYS[3], userId, units)
  end
end
for field, entry in pairs(ledger) do
  redis.call("HSET", KEYS[4], field, entry)
end
local reply = {1}
for _, k in ipairs(kept) do
  redis.call("HSET", KEYS[5], k[1], k[2])
  redis.call("ZADD", KEYS[6], k[3], k[1])
  reply[#reply + 1] = k[1]
  reply[#reply + 1] = k[2]
end
for _, field in ipairs(keptAdjustments) do
  reply[#reply + 1] = field
  reply[#reply + 1] = ledger[field]
end
return reply
