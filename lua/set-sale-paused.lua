--[[
  set-sale-paused: set or clear the pause flag of a sale that is in Redis. A sale whose state is not
  here (Redis lost it, a rebuild has not written it yet) is left alone: writing the flag alone would
  create a meta hash without the sale in it. Postgres holds the flag too; the rebuild takes it from there.

  KEYS[1]  meta  hash: must have "epoch" (every initialised or rebuilt sale has one)

  ARGV[1]  "1" to pause, "0" to resume

  Returns the code:
    1   OK (set)
    2   NOT_INITIALISED (nothing written)
  Codes are named as in src/stock/codes.ts (ScriptCode), one table for every script.
]]
if redis.call("HEXISTS", KEYS[1], "epoch") == 0 then
  return 2
end
redis.call("HSET", KEYS[1], "paused", ARGV[1])
return 1
