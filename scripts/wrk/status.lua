-- GET /v1/auth/2fa for contacts picked at random: wrk ... -s status.lua URL -- KEY_FILE CONTACTS_FILE
local ids, key = {}, nil

function init(args)
  key = io.open(args[1]):read("*l")
  for line in io.lines(args[2]) do ids[#ids + 1] = line end
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
end

function request()
  local id = ids[math.random(#ids)]
  return wrk.format("GET", "/v1/auth/2fa?contactId=" .. id, { ["Authorization"] = "Bearer " .. key })
end
