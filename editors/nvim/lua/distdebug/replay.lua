--- distdebug.replay: stepping through an attempt's trajectory (`distdebug/replay`). Each move
--- asks the server again (a running attempt grows), opens the file region the step read, marks
--- every line read so far with `DistdebugRead` and shows the step's kind, tool and text.
local server = require('distdebug.server')

local M = {}

M.ns = vim.api.nvim_create_namespace('distdebug/replay')
--- { config, attempt, position (1-based into steps), steps, first_label_read } of the replay.
M.state = nil

vim.api.nvim_set_hl(0, 'DistdebugRead', { default = true, underline = true, sp = 'Gray' })

--- Marks the lines of `read_so_far` in every loaded buffer of the workspace `root`.
local function mark(root, read_so_far)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
    end
  end
  for _, f in ipairs(read_so_far or {}) do
    local buf = vim.fn.bufnr(vim.fs.joinpath(root, f.path))
    if buf ~= -1 and vim.api.nvim_buf_is_loaded(buf) then
      local n = vim.api.nvim_buf_line_count(buf)
      for _, r in ipairs(f.ranges) do
        local first, last = r[1], (r[2] == vim.NIL or r[2] == nil) and n or math.min(r[2], n)
        for l = first, last do
          vim.api.nvim_buf_set_extmark(buf, M.ns, l - 1, 0, { line_hl_group = 'DistdebugRead', priority = 5 })
        end
      end
    end
  end
end

--- One line about a step: `step 5/9 · action bash: sed -n 10,20p src/lease.py (reads a label)`.
function M.describe(step, position, total)
  local what = step.text
  if (what == nil or what == '') and type(step.args) == 'table' then
    what = step.args.command or vim.json.encode(step.args)
  end
  what = tostring(what or ''):gsub('%s+', ' ')
  if #what > 160 then
    what = what:sub(1, 157) .. '...'
  end
  return ('step %d/%d · %s%s: %s%s'):format(
    position,
    total,
    step.kind,
    step.tool and (' ' .. step.tool) or '',
    what,
    step.reads_label and ' (reads a labeled line)' or ''
  )
end

--- Shows step `position` of `answer`: opens what it read and marks the lines read so far.
local function show(answer, position, root)
  local step = answer.steps[position]
  local read = step.paths_read and step.paths_read[1]
  if read then
    vim.cmd.edit(vim.fn.fnameescape(vim.fs.joinpath(root, read.path)))
    local n = vim.api.nvim_buf_line_count(0)
    local line = math.min(math.max(read.start_line or 1, 1), n)
    vim.api.nvim_win_set_cursor(0, { line, 0 })
  end
  mark(root, step.read_so_far)
  vim.notify('distdebug: ' .. M.describe(step, position, #answer.steps))
end

--- Moves through the current attempt's steps: `how` is 'next', 'prev' or 'first' (the first
--- step that read a labeled line). `request(method, params, cb)` talks to the server.
function M.move(request, how, cb)
  local c = server.client()
  local root = c and c.root_dir
  request('distdebug/replay', nil, function(err, answer)
    if err then
      return cb and cb(err)
    end
    local steps = answer.steps or {}
    if #steps == 0 then
      vim.notify('distdebug: the attempt has no step yet', vim.log.levels.WARN)
      return cb and cb('no step')
    end
    local same = M.state and M.state.config == answer.config and M.state.attempt == answer.attempt
    local at = same and M.state.position or 0
    local position
    if how == 'first' then
      if answer.first_label_read == vim.NIL or answer.first_label_read == nil then
        local why = answer.labels and 'no step read a labeled line' or 'the labels are not known (the incident setting)'
        vim.notify('distdebug: ' .. why, vim.log.levels.WARN)
        return cb and cb(why)
      end
      position = answer.first_label_read + 1
    elseif how == 'prev' then
      position = math.max(at - 1, 1)
    else
      position = math.min(at + 1, #steps)
    end
    M.state = { config = answer.config, attempt = answer.attempt, position = position }
    show(answer, position, root or vim.fn.getcwd())
    if cb then
      cb(nil, steps[position], position)
    end
  end)
end

--- Ends the replay: the marks go.
function M.stop()
  M.state = nil
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
    end
  end
end

return M
