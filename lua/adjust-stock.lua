--[[
  adjust-stock: an operator adds or removes units while the sale runs. Never below zero remaining:
  units already reserved stay reserved. Applied once per adjustment id: the ledger entry records the
  delta and the Redis generation (meta "epoch") it was applied in, so a retry of the same id changes
  nothing (within one generation: an entry a rebuild carried over from an older one is applied again), a reuse of the id with another delta is refused, and the caller can record the adjustment
  in Postgres against that generation (a rebuild since then has replaced this state).

  KEYS[1]  meta    hash: field "stock" = initial stock + all adjustments; field "epoch"
  KEYS[2]  stock   string: units remaining
  KEYS[3]  ledger  hash: "a:<adjustmentId>" -> adjustment entry (JSON); also the idempotency guard
  KEYS[4]  room    hash (optional; queue and draw sales, see queue-step.lua): held (units admissions
                   hold) and countedRemaining. Until the sale's end (meta endsAt), units admissions hold
                   are not removed either: an admitted buy never fails for stock. The count errs high
                   between the room's ticks, so a removal may be refused until the next tick counts the
                   holds again

  ARGV[1]  now (ms)
  ARGV[2]  adjustmentId
  ARGV[3]  delta (integer, may be negative)

  Returns {code, remaining, stock, epoch, delta}, epoch and delta those of the adjustment's entry:
    {1, remaining, stock, epoch, delta}   OK (adjusted)
    {13, remaining, stock, epoch, delta}  ALREADY_APPLIED (same id, same delta; nothing changed)
    {14, removable, stock, epoch, 0}      BELOW_RESERVED (delta would take remaining below zero, or below the
                                          units admissions hold; removable = what may be removed;
                                          nothing changed)
    {2, 0, 0, 0, 0}                       NOT_INITIALISED (no meta hash with an "epoch": lost or partial)
    {15, remaining, stock, epoch, delta}  ID_REUSED (same id applied with another delta, returned; nothing changed)
  Codes are named as in src/stock/codes.ts (ScriptCode), one table for every script.

  Ledger entry written (JSON; the type, its encoder and its parser are src/stock/ledger-entry.ts):
    "a:<adjustmentId>"  {type = "adjust", adjustmentId, delta, before, after, at, epoch}
]]
local delta = tonumber(ARGV[3])
local epoch = tonumber(redis.call("HGET", KEYS[1], "epoch") or "0")
if epoch == 0 then
  return {2, 0, 0, 0, 0}
end
local remaining = tonumber(redis.call("GET", KEYS[2]) or "0")
local stock = tonumber(redis.call("HGET", KEYS[1], "stock") or "0")
local existing = redis.call("HGET", KEYS[3], "a:" .. ARGV[2])
local entry = existing and cjson.decode(existing)
-- an entry a rebuild carried over from an older generation was replaced with that generation's state:
-- unless Postgres recorded it (the caller asks Postgres first), it is not applied in this one
if entry and tonumber(entry.epoch or "1") == epoch then
  local code = 13
  if tonumber(entry.delta) ~= delta then
    code = 15
  end
  return {code, remaining, stock, tonumber(entry.epoch or "1"), tonumber(entry.delta)}
end
local removable = remaining
-- after the sale's end nobody buys: holds no longer keep anything
if KEYS[4] and tonumber(ARGV[1]) < tonumber(redis.call("HGET", KEYS[1], "endsAt") or "0") then
  local room = redis.call("HMGET", KEYS[4], "held", "countedRemaining")
  removable = math.min(remaining, tonumber(room[2] or remaining)) - tonumber(room[1] or "0")
end
if remaining + delta < 0 or (delta < 0 and removable + delta < 0) then
  return {14, math.max(0, removable), stock, epoch, 0}
end
local after = redis.call("INCRBY", KEYS[2], delta)
local total = redis.call("HINCRBY", KEYS[1], "stock", delta)
redis.call("HSET", KEYS[3], "a:" .. ARGV[2], cjson.encode({
  type = "adjust", adjustmentId = ARGV[2], delta = delta, before = remaining, after = after,
  at = tonumber(ARGV[1]), epoch = epoch
}))
return {1, after, total, epoch, delta}
