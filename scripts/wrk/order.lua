-- GET /v1/widget/orders/{id} for orders in random order: wrk ... -s order.lua URL -- KEY_FILE ORDERS_FILE
-- As status.lua: the requests are formatted once in init, then sent round-robin from a
-- shuffled list, so consecutive reads hit unrelated pages of the database.
local requests, i = {}, 0

function init(args)
  local key = io.open(args[1]):read("*l")
  local headers = { ["Authorization"] = "Bearer " .. key }
  for line in io.lines(args[2]) do
    requests[#requests + 1] = wrk.format("GET", "/v1/widget/orders/" .. line, headers)
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
