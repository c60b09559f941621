-- The script of every closed-loop wrk run of the runner: pipelining (init)
-- and the dump of wrk's whole latency record (done).
--
-- Pipelining: every write carries DEPTH requests (the first script argument,
-- default 1) and wrk waits for DEPTH responses before the next, as in
-- TechEmpower's plaintext test.
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

-- The histogram dump: percentiles of several client hosts cannot be combined,
-- their histograms can. wrk keeps one count per latency in microseconds (up to
-- the timeout) and calls done() after printing its report, so the block below
-- follows wrk's own lines on stdout:
--
--   archbench-histogram 1 unit=U requests=R duration_us=D count=C min=A max=B source=S
--   STEP N
--   ...
--   archbench-histogram-end
--
-- one line per value that occurred, ascending, N times; the value is the
-- previous line's plus STEP (the first line's STEP is the value itself), which
-- halves the size against writing each value whole. U = us: the values are
-- latencies in whole microseconds, wrk's own resolution, when at most
-- EXACT_LINES of them occurred (short or light runs); else U = bucket10: the
-- values are bucket indices of archbench/analyze/histogram.py (and of the
-- open_loop client), 1024 sub-buckets per power of two of nanoseconds, each
-- latency v us counted in the bucket of v * 1000 ns. Buckets are at most 1/1024
-- of their value wide and number at most 28,672, so a block stays within about
-- 250 KB however the latencies spread (5 s trials measured at 26-28 KB, against
-- 200-300 KB for every microsecond). A and B are the smallest and largest
-- latency in us. C is the sum of the N: wrk's record after its own correction
-- of coordinated omission (stats_correct adds samples for latencies of at least
-- twice the mean interval between a connection's requests), so its percentiles
-- are the ones wrk prints; R and D (wrk's requests and run time) let a reader
-- undo that correction in a U = us block.
--
-- wrk 4.1 hands the record over as `latency(i)` (value and count of the i-th
-- distinct value) and `#latency`, each a scan of the record from its minimum:
-- reading every value that way costs distinct values x range, minutes for a
-- record spread over a 2 s timeout. So the dump reads wrk's `stats` struct
-- (count, limit, min, max, data[]: src/stats.h of wrk 4.1) through LuaJIT's
-- FFI, one pass, after checking it against wrk's own min, max and #latency;
-- only if that check fails does it fall back to latency(i), and then only when
-- the work is bounded (source=api); else it says so (source=none, no lines).
local EXACT_LINES = 2048
local API_WORK_LIMIT = 2e8
local SUB_BITS, TOP_EXP = 10, 36
local SUB = 2 ^ SUB_BITS
local BUCKETS = 2 * SUB + (TOP_EXP - SUB_BITS) * SUB

-- histogram.py's bucket_of, in doubles (exact: latencies stay far below 2^53 ns).
local function bucket_of(ns)
   if ns < 2 * SUB then
      return ns
   end
   local e = SUB_BITS
   while 2 ^ (e + 1) <= ns do
      e = e + 1
   end
   if e > TOP_EXP then
      return BUCKETS - 1
   end
   return 2 * SUB + (e - SUB_BITS - 1) * SUB + (math.floor(ns / 2 ^ (e - SUB_BITS)) - SUB)
end

local function bucketed(pairs_)
   local out = {}
   for _, p in ipairs(pairs_) do
      local i = bucket_of(p[1] * 1000)
      local last = out[#out]
      if last ~= nil and last[1] == i then
         last[2] = last[2] + p[2]
      else
         out[#out + 1] = { i, p[2] }
      end
   end
   return out
end

local function record_by_ffi(latency)
   local ok, ffi = pcall(require, "ffi")
   if not ok then
      return nil
   end
   local cast_ok, cast = pcall(ffi.cast, "uint64_t **", latency)
   if not cast_ok then
      return nil
   end
   local s = cast[0]
   local count, min, max = tonumber(s[0]), tonumber(s[2]), tonumber(s[3])
   if count == 0 then
      return {}, 0
   end
   if min ~= latency.min or max ~= latency.max or max >= tonumber(s[1]) then
      return nil
   end
   local pairs_, total = {}, 0
   for v = min, max do
      local n = tonumber(s[4 + v])
      if n > 0 then
         pairs_[#pairs_ + 1] = { v, n }
         total = total + n
      end
   end
   if total ~= count or #pairs_ ~= #latency then
      return nil
   end
   return pairs_, total
end

local function record_by_api(latency)
   local distinct = #latency
   if distinct == 0 then
      return {}, 0
   end
   if distinct * (latency.max - latency.min + 1) > API_WORK_LIMIT then
      return nil
   end
   local pairs_, total = {}, 0
   for i = 1, distinct do
      local v, n = latency(i)
      pairs_[i] = { v, n }
      total = total + n
   end
   return pairs_, total
end

function done(summary, latency, requests)
   local source = "ffi"
   local pairs_, total = record_by_ffi(latency)
   if pairs_ == nil then
      source = "api"
      pairs_, total = record_by_api(latency)
   end
   if pairs_ == nil then
      source, pairs_, total = "none", {}, 0
   end
   local min, max = 0, 0
   if #pairs_ > 0 then
      min, max = pairs_[1][1], pairs_[#pairs_][1]
   end
   local unit = "us"
   if #pairs_ > EXACT_LINES then
      unit, pairs_ = "bucket10", bucketed(pairs_)
   end
   local lines, previous = {}, 0
   for i, p in ipairs(pairs_) do
      lines[i] = string.format("%d %d", p[1] - previous, p[2])
      previous = p[1]
   end
   io.write(string.format("archbench-histogram 1 unit=%s requests=%d duration_us=%d count=%d min=%d max=%d source=%s\n",
      unit, summary.requests, summary.duration, total, min, max, source))
   if #lines > 0 then
      io.write(table.concat(lines, "\n"), "\n")
   end
   io.write("archbench-histogram-end\n")
end
