-- Pipelining for wrk: every write carries DEPTH requests (the first script
-- argument, default 1) and wrk waits for DEPTH responses before the next, as
-- in TechEmpower's plaintext test.
--
-- Unlike the usual `request = function() return req end`, this keeps wrk's
-- static request path: a script that defines a global `request` makes wrk call
-- into Lua for every batch, which costs the client CPU the study measures the
-- server with. wrk.init() builds the request once with wrk.format() right
-- after calling init(), so init() wraps wrk.format to repeat the request.
function init(args)
   local depth = tonumber(args[1] or "1")
   if depth == nil or depth < 1 or depth % 1 ~= 0 then
      error("pipeline depth must be a positive integer, got " .. tostring(args[1]))
   end
   local format = wrk.format
   wrk.format = function(...)
      return string.rep(format(...), depth)
   end
end
