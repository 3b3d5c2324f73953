--- Helpers for the Neovim end-to-end scripts (run with `nvim --headless -u NONE -i NONE -n -l`).
--- Steps run in order; the first failure stops the script with an error, which makes nvim exit 1.
--- Waits always have a condition and a deadline, and a missed deadline fails the step.
local M = {}

M.passed, M.failed, M.skipped = 0, 0, 0

--- Arguments: repository root and the distdebug binary.
function M.args()
  local repo = assert(_G.arg[1], 'usage: nvim -l script.lua REPO DISTDEBUG_BIN')
  local bin = assert(_G.arg[2], 'usage: nvim -l script.lua REPO DISTDEBUG_BIN')
  assert(vim.fn.executable(bin) == 1, 'not an executable: ' .. bin)
  return repo, bin
end

local function out(line)
  io.stdout:write(line .. '\n')
  io.stdout:flush()
end

--- Waits until `cond()` returns a truthy value and returns it; fails naming `what` after `ms`.
function M.wait(what, cond, ms)
  local value
  local ok = vim.wait(ms or 20000, function()
    value = cond()
    return value ~= nil and value ~= false
  end, 20)
  if not ok then
    error(('timed out after %d ms waiting for: %s'):format(ms or 20000, what), 2)
  end
  return value
end

function M.eq(got, want, what)
  if not vim.deep_equal(got, want) then
    error(('%s: expected %s, got %s'):format(what, vim.inspect(want), vim.inspect(got)), 2)
  end
end

function M.ok(cond, what)
  if not cond then
    error(what, 2)
  end
  return cond
end

local skip_marker = {}
--- Ends the current step as skipped, with the reason printed.
function M.skip(reason)
  error({ [skip_marker] = true, reason = reason }, 0)
end

--- Runs a named step; a failure ends the script (later steps depend on earlier ones).
function M.step(name, fn)
  local ok, err = xpcall(fn, function(e)
    if type(e) == 'table' and e[skip_marker] then
      return e
    end
    return debug.traceback(tostring(e), 2)
  end)
  if ok then
    M.passed = M.passed + 1
    out('ok - ' .. name)
  elseif type(err) == 'table' and err[skip_marker] then
    M.skipped = M.skipped + 1
    out(('skip - %s: %s'):format(name, err.reason))
  else
    M.failed = M.failed + 1
    out('not ok - ' .. name)
    out(err)
    M.finish()
  end
end

--- Stops every client (so no server is orphaned), prints the summary, fails on any failure.
function M.finish()
  local clients = vim.lsp.get_clients()
  for _, c in ipairs(clients) do
    c:stop()
  end
  vim.wait(5000, function()
    return #vim.lsp.get_clients() == 0
  end, 20)
  out(('%d passed, %d failed, %d skipped'):format(M.passed, M.failed, M.skipped))
  if M.failed > 0 then
    error('some steps failed', 0)
  end
end

--- Reads a JSON file, or nil when it does not exist (yet).
function M.read_json(path)
  if vim.fn.filereadable(path) == 0 then
    return nil
  end
  return vim.json.decode(table.concat(vim.fn.readfile(path), '\n'))
end

--- Runs a command, failing with its stderr when it fails.
function M.run(cmd)
  local r = vim.system(cmd, { text = true }):wait()
  if r.code ~= 0 then
    error(('%s failed (%d): %s'):format(table.concat(cmd, ' '), r.code, r.stderr), 2)
  end
  return r.stdout
end

--- A fresh temp folder; XDG dirs point inside it so nothing is written to $HOME.
function M.sandbox()
  local root = vim.fn.tempname()
  vim.fn.mkdir(root, 'p')
  return root
end

--- The attempt folders under a results root, sorted.
function M.attempt_dirs(results)
  local dirs = vim.fs.find(function(name, path)
    return name:match('^attempt%-%d+$') ~= nil and vim.fn.isdirectory(vim.fs.joinpath(path, name)) == 1
  end, { path = results, type = 'directory', limit = math.huge })
  table.sort(dirs)
  return dirs
end

--- distdebug diagnostics of a file in the workspace (opened or not), by code.
function M.diagnostics(ws, rel, code)
  local buf = vim.uri_to_bufnr(vim.uri_from_fname(vim.fs.joinpath(ws, rel)))
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.source == 'distdebug' and (code == nil or tostring(d.code) == code) then
      table.insert(out, d)
    end
  end
  return out
end

return M
