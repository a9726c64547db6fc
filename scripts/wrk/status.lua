-- GET /v1/auth/2fa for contacts in random order: wrk ... -s status.lua URL -- KEY_FILE CONTACTS_FILE
-- The requests are formatted once in init (wrk's Lua runs in the measuring process, on the same
-- two cores as the server), then sent round-robin from a random start.
local requests, i = {}, 0

function init(args)
  local key = io.open(args[1]):read("*l")
  local headers = { ["Authorization"] = "Bearer " .. key }
  for line in io.lines(args[2]) do
    requests[#requests + 1] = wrk.format("GET", "/v1/auth/2fa?contactId=" .. line, headers)
  end
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
  -- Shuffle, so consecutive requests hit unrelated pages of the database.
  for k = #requests, 2, -1 do
    local j = math.random(k)
    requests[k], requests[j] = requests[j], requests[k]
  end
end

function request()
  i = i % #requests + 1
  return requests[i]
end
