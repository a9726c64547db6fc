-- POST /v1/auth/verify2fa with valid codes, each contact used once per code:
-- wrk ... -s verify.lua URL -- KEY_FILE CONTACTS_FILE CODE_NOW CODE_NEXT
-- Thread k of n takes contacts k, k+n, k+2n, ... with the current step's code, then again with
-- the next step's code (the window accepts both, in that order), so no request is a replay.
local counter = 0
function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
end

local ids, key, codes, nthreads, i, pass = {}, nil, {}, 1, 0, 1

function init(args)
  key = io.open(args[1]):read("*l")
  for line in io.lines(args[2]) do ids[#ids + 1] = line end
  codes = { args[3], args[4] }
  nthreads = tonumber(wrk.thread:get("nthreads") or "1")
  i = tid
end

function request()
  if i >= #ids then
    i = tid
    pass = pass + 1
  end
  local id = ids[i + 1]
  i = i + nthreads
  local body = '{"contactId":"' .. id .. '","token":"' .. (codes[pass] or "000000") .. '"}'
  return wrk.format("POST", "/v1/auth/verify2fa",
    { ["Authorization"] = "Bearer " .. key, ["Content-Type"] = "application/json" }, body)
end
