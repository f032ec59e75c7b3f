--[[
  adjust-stock: an operator adds or removes units while the sale runs. Never below zero remaining:
  units already reserved stay reserved. Applied once per adjustment id: the ledger entry records the
  delta and the Redis generation (meta "epoch") it was applied in, so a retry of the same id changes
  nothing (within one generation: an entry a rebuild carried over from an older one is applied again), a reuse of the id with another delta is refused, and the caller can record the adjustment
  in Postgres against that generation (a rebuild since then has replaced this state).
  A drop of several variants (KEYS[5]) adjusts one variant: its units and the sale's change together,
  never taking the variant below zero remaining; a reuse of the id for another variant is refused too.

  KEYS[1]  meta    hash: field "stock" = initial stock + all adjustments; field "epoch"
  KEYS[2]  stock   string: units remaining
  KEYS[3]  ledger  hash: "a:<adjustmentId>" -> adjustment entry (JSON); also the idempotency guard
  KEYS[4]  room    hash (optional; queue and draw sales, see room-step.lua): held (units admissions
                   hold) and countedRemaining. Until the sale's end (meta endsAt), units admissions hold
                   are not removed either: an admitted buy never fails for stock. The count errs high
                   between the room's ticks, so a removal may be refused until the next tick counts the
                   holds again
  KEYS[5]  vstock  hash (a drop of several variants only): variantId -> units remaining; needs KEYS[4]

  ARGV[1]  now (ms)
  ARGV[2]  adjustmentId
  ARGV[3]  delta (integer, may be negative)
  ARGV[4]  variantId (with KEYS[5]: the variant adjusted; the caller checked the sale has it)

  Returns {code, remaining, stock, epoch, delta, variantRemaining, variantId}, epoch, delta and variantId
  those of the adjustment's entry; variantRemaining is the variant's units; the last two only with
  KEYS[5] (a sale of one answers the first five, as before variants):
    {1, remaining, stock, epoch, delta, vr, v}   OK (adjusted)
    {13, remaining, stock, epoch, delta, vr, v}  ALREADY_APPLIED (same id, same delta and variant; nothing changed)
    {14, removable, stock, epoch, 0, vr, v}      BELOW_RESERVED (delta would take remaining, or the variant's
                                                 remaining, below zero, or below the units admissions hold;
                                                 removable = what may be removed; nothing changed)
    {2, 0, 0, 0, 0}                              NOT_INITIALISED (no meta hash with an "epoch": lost or partial)
    {15, remaining, stock, epoch, delta, vr, v}  ID_REUSED (same id applied with another delta or to another
                                                 variant, both returned; nothing changed)
  Codes are named as in src/stock/codes.ts (ScriptCode), one table for every script.

  Ledger entry written (JSON; the type, its encoder and its parser are src/stock/ledger-entry.ts):
    "a:<adjustmentId>"  {type = "adjust", adjustmentId, delta, before, after, at, epoch, variantId}
                        (variantId with KEYS[5] only; before and after are the sale's remaining)
]]
local delta = tonumber(ARGV[3])
local variantId = ARGV[4] or ""
local perVariant = KEYS[5] ~= nil
local function answer(reply)
  if not perVariant then
    reply[6] = nil
    reply[7] = nil
  end
  return reply
end
local epoch = tonumber(redis.call("HGET", KEYS[1], "epoch") or "0")
if epoch == 0 then
  return {2, 0, 0, 0, 0}
end
local remaining = tonumber(redis.call("GET", KEYS[2]) or "0")
local stock = tonumber(redis.call("HGET", KEYS[1], "stock") or "0")
local variantLeft = remaining
if perVariant then
  variantLeft = tonumber(redis.call("HGET", KEYS[5], variantId) or "0")
end
local existing = redis.call("HGET", KEYS[3], "a:" .. ARGV[2])
local entry = existing and cjson.decode(existing)
-- an entry a rebuild carried over from an older generation was replaced with that generation's state:
-- unless Postgres recorded it (the caller asks Postgres first), it is not applied in this one
if entry and tonumber(entry.epoch or "1") == epoch then
  local code = 13
  local entryVariant = entry.variantId
  if type(entryVariant) ~= "string" then
    entryVariant = ""
  end
  if tonumber(entry.delta) ~= delta or (perVariant and entryVariant ~= variantId) then
    code = 15
  end
  return answer({code, remaining, stock, tonumber(entry.epoch or "1"), tonumber(entry.delta), variantLeft, entryVariant})
end
local removable = remaining
-- after the sale's end nobody buys: holds no longer keep anything
if KEYS[4] and tonumber(ARGV[1]) < tonumber(redis.call("HGET", KEYS[1], "endsAt") or "0") then
  local room = redis.call("HMGET", KEYS[4], "held", "countedRemaining")
  removable = math.min(remaining, tonumber(room[2] or remaining)) - tonumber(room[1] or "0")
end
if perVariant then
  removable = math.min(removable, variantLeft)
end
if remaining + delta < 0 or variantLeft + delta < 0 or (delta < 0 and removable + delta < 0) then
  return answer({14, math.max(0, removable), stock, epoch, 0, variantLeft, variantId})
end
local after = redis.call("INCRBY", KEYS[2], delta)
local total = redis.call("HINCRBY", KEYS[1], "stock", delta)
local variantAfter = after
local written = {
  type = "adjust", adjustmentId = ARGV[2], delta = delta, before = remaining, after = after,
  at = tonumber(ARGV[1]), epoch = epoch
}
if perVariant then
  variantAfter = redis.call("HINCRBY", KEYS[5], variantId, delta)
  written.variantId = variantId
end
redis.call("HSET", KEYS[3], "a:" .. ARGV[2], cjson.encode(written))
return answer({1, after, total, epoch, delta, variantAfter, variantId})
