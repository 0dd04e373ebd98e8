-- Requests for bench/scale.sh: each request takes the next line of the
-- file named by WRK_PATHS (threads start at different lines), so listings
-- and searches vary and no cache can stand in for the work. WRK_METHOD sets
-- the method; WRK_BODIES names a file of bodies, line n going with path n. Prints the latency percentiles (us)
-- and the rate in a form the script reads.
local paths = {}
for line in io.lines(os.getenv("WRK_PATHS")) do
  paths[#paths + 1] = line
end
local bodies = {}
if os.getenv("WRK_BODIES") then
  for line in io.lines(os.getenv("WRK_BODIES")) do
    bodies[#bodies + 1] = line
  end
end
local method = os.getenv("WRK_METHOD") or "GET"
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("start", counter * 7919)
end

function init(args)
  i = start or 0
end

function request()
  i = i + 1
  local n = (i % #paths) + 1
  return wrk.format(method, paths[n], nil, bodies[n])
end

function done(summary, latency, requests)
  local errors = summary.errors.status + summary.errors.connect + summary.errors.read
    + summary.errors.write + summary.errors.timeout
  io.write(string.format("RESULT %.1f %d %d %d %d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9), errors))
end
