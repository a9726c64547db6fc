-- POST /v1/auth/verify2fa with valid codes, each contact used once per code:
-- wrk ... -s verify.lua URL -- KEY_FILE CONTACTS_FILE CODE_NOW CODE_NEXT
-- Thread k of n takes contacts k, k+n, k+2n, ... with the current step's code, then again with
-- the next step's code (the window accepts both, in that order), so no request is a replay.
-- The requests are formatted once in init; a run longer than two passes would wrap around
-- into replays, which the server rightly refuses (and wrk counts as non-2xx answers).
local counter = 0
function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
end

local requests, i = {}, 0

function init(args)
  local key = io.open(args[1]):read("*l")
  local headers = { ["Authorization"] = "Bearer " .. key, ["Content-Type"] = "application/json" }
  local ids = {}
  for line in io.lines(args[2]) do ids[#ids + 1] = line end
  local nthreads = tonumber(wrk.thread:get("nthreads") or "1")
  for _, code in ipairs({ args[3], args[4] }) do
    for k = tid + 1, #ids, nthreads do
      local body = '{"contactId":"' .. ids[k] .. '","token":"' .. code .. '"}'
      requests[#requests + 1] = wrk.format("POST", "/v1/auth/verify2fa", headers, body)
    end
  end
end

function request()
  i = i % #requests + 1
  return requests[i]
end
