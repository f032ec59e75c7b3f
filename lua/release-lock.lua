--[[
  release-lock: delete a lock only while it still holds the caller's token. A holder whose lock expired
  (its work outlived the TTL) and was taken by another must not delete the other's lock; a GET then a
  DEL from the client would, when the lock changes hands between the two.

  KEYS[1]  the lock (string: the holder's token)

  ARGV[1]  the caller's token

  Returns the code:
    1   OK (released)
    21  NOT_HELD (not held by this token; nothing deleted)
  Codes are named as in src/stock/codes.ts (ScriptCode), one table for every script.
]]
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return 21
end
redis.call("DEL", KEYS[1])
return 1
