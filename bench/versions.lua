-- Requests for bench/catalog_changes.sh: listings of 20 products in a fixed
-- mix (WRK_PATHS, one path a line, as bench/scale.lua), each answer read
-- whole: during an import that gives every product a new brand ("B2 ..."),
-- an answer listing products of both catalogs mixes two versions and is
-- counted. Prints "RESULT req/s p50 p99 p99.9 errors mixed" and, with
-- WRK_BUCKETS set, "BUCKET unix-second answers" for every second.
local paths = {}
for line in io.lines(os.getenv("WRK_PATHS")) do
  paths[#paths + 1] = line
end
local threads = {}
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("start", counter * 7919)
  table.insert(threads, thread)
end

function init(args)
  i = start or 0
  mixed = 0
  buckets = {}
end

function request()
  i = i + 1
  return wrk.format("GET", paths[(i % #paths) + 1])
end

function response(status, headers, body)
  local all, new = 0, 0
  for _ in string.gmatch(body, '"brand":"') do all = all + 1 end
  for _ in string.gmatch(body, '"brand":"B2 ') do new = new + 1 end
  if new > 0 and new < all then mixed = mixed + 1 end
  local second = os.time()
  buckets[second] = (buckets[second] or 0) + 1
end

function done(summary, latency, requests)
  local errors = summary.errors.status + summary.errors.connect + summary.errors.read
    + summary.errors.write + summary.errors.timeout
  local mixed_total = 0
  local seconds = {}
  for _, t in ipairs(threads) do
    mixed_total = mixed_total + (t:get("mixed") or 0)
    for second, n in pairs(t:get("buckets") or {}) do
      seconds[second] = (seconds[second] or 0) + n
    end
  end
  if os.getenv("WRK_BUCKETS") then
    for second, n in pairs(seconds) do io.write(string.format("BUCKET %d %d\n", second, n)) end
  end
  io.write(string.format("RESULT %.1f %d %d %d %d %d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9), errors, mixed_total))
end
