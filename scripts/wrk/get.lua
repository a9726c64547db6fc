-- GET PREFIX..ID for ids in random order, with a secret key:
--   wrk ... -s get.lua URL -- KEY_FILE IDS_FILE PREFIX
-- e.g. PREFIX "/v1/auth/2fa?contactId=" with contact ids, or "/v1/widget/orders/" with order
-- ids. The requests are formatted once in init (wrk's Lua runs in the measuring process, on the
-- same two cores as the server), then sent round-robin from a shuffled list, so consecutive
-- requests hit unrelated pages of the database.
local requests, i = {}, 0

function init(args)
  local key = io.open(args[1]):read("*l")
  local headers = { ["Authorization"] = "Bearer " .. key }
  for line in io.lines(args[2]) do
    requests[#requests + 1] = wrk.format("GET", args[3] .. line, headers)
  end
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
  for k = #requests, 2, -1 do
    local j = math.random(k)
    requests[k], requests[j] = requests[j], requests[k]
  end
end

function request()
  i = i % #requests + 1
  return requests[i]
end
