-- wrk script: send N pipelined requests per batch (default 16).
--   wrk -t1 -c128 -d10s -s bench/peers/pipeline.lua http://127.0.0.1:PORT/plaintext -- 16
-- The N requests for the URL's path are formatted once and concatenated into
-- one string; wrk writes the batch in one go and counts every response.
-- wrk's latency percentiles are not meaningful in this mode (they read 0).

local batch

init = function(args)
   local depth = tonumber(args[1]) or 16
   if depth < 1 then
      error("pipeline depth must be at least 1")
   end
   local r = {}
   for i = 1, depth do
      r[i] = wrk.format()
   end
   batch = table.concat(r)
end

request = function()
   return batch
end
