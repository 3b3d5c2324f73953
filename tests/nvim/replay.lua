--- Replaying an attempt in a real Neovim through the plugin: an imported harness's attempt on
--- the tiny-lease fixture (its trajectory.json written here, as an importer leaves it) is made
--- current, then :DistdebugReplay steps forward and back, opens the file region each step
--- read, marks the lines read so far (DistdebugRead) and jumps to the first step that read a
--- labeled line (lease.py 13-18, first read at step 4, lines 10-20).
local h = dofile(vim.fs.joinpath(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)), 'helpers.lua'))
local repo, bin = h.args()

local tmp = h.sandbox()
local ws = vim.fs.joinpath(tmp, 'ws')
local results = vim.fs.joinpath(tmp, 'results')
local incident = vim.fs.joinpath(repo, 'tests', 'fixtures', 'incidents', 'tiny-lease')
local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level or vim.log.levels.INFO })
end
local dd
local replay

--- The lines (1-based) of `buf` marked as read.
local function marked(buf)
  local lines = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, replay.ns, 0, -1, { details = true })) do
    if m[4].line_hl_group == 'DistdebugRead' then
      table.insert(lines, m[2] + 1)
    end
  end
  table.sort(lines)
  return lines
end

local function range(a, b)
  local out = {}
  for i = a, b do
    table.insert(out, i)
  end
  return out
end

--- Runs `:DistdebugReplay how` and waits for it to show its step.
local function step_to(how)
  local done
  dd.replay(how, function(err, step, position)
    done = { err = err, step = step, position = position }
  end)
  local r = h.wait(':DistdebugReplay ' .. how, function()
    return done
  end)
  h.ok(not r.err, ':DistdebugReplay ' .. how .. ' failed: ' .. tostring(r.err))
  return r.step, r.position
end

h.step('an imported attempt with reads, and the plugin set up', function()
  h.run({ bin, 'prepare', incident, '--out', ws })
  local dir = vim.fs.joinpath(results, 'mini', 'tiny-lease', 'attempt-1')
  vim.fn.mkdir(dir, 'p')
  local steps = {
    { index = 0, kind = 'thought', text = 'the log says the lease lasted hours' },
    { index = 1, kind = 'action', tool = 'bash', args = { command = 'sed -n 1,12p src/lease.py' }, paths_read = { { path = 'src/lease.py', start_line = 1, end_line = 12 } } },
    { index = 2, kind = 'observation', text = 'class LeaseTable: ...' },
    { index = 3, kind = 'action', tool = 'bash', args = { command = 'cat src/server.py' }, paths_read = { { path = 'src/server.py' } } },
    { index = 4, kind = 'action', tool = 'bash', args = { command = 'sed -n 10,20p src/lease.py' }, paths_read = { { path = 'src/lease.py', start_line = 10, end_line = 20 } } },
    { index = 5, kind = 'submit', text = 'done' },
  }
  vim.fn.writefile({ vim.json.encode({ incident = 'tiny-lease', attempt = 1, agent = 'mini-swe-agent', exit = 'submitted', steps = steps }) }, vim.fs.joinpath(dir, 'trajectory.json'))
  vim.fn.writefile({ vim.json.encode({ blocks = {} }) }, vim.fs.joinpath(dir, 'diagnosis.json'))
  vim.opt.runtimepath:prepend(vim.fs.joinpath(repo, 'editors', 'nvim'))
  vim.cmd('filetype on')
  dd = require('distdebug').setup({ path = bin, settings = { incident = incident, results = results }, progress = false })
  replay = require('distdebug.replay')
  h.ok(vim.fn.exists(':DistdebugReplay') == 2, ':DistdebugReplay is defined')
  vim.cmd.edit(vim.fn.fnameescape(vim.fs.joinpath(ws, 'src', 'server.py')))
  h.wait('the client to initialize', function()
    local c = vim.lsp.get_clients({ name = 'distdebug' })[1]
    return c and c.initialized
  end)
  local shown
  dd.show_attempt('mini#1', function(err)
    shown = err or true
  end)
  h.wait('mini#1 current', function()
    return shown
  end)
  h.eq(shown, true, 'showAttempt mini#1')
end)

h.step('next: the thought (no file), then the first read opens lease.py at line 1 and marks 1-12', function()
  local step, position = step_to('next')
  h.eq({ position, step.kind }, { 1, 'thought' }, 'the first step')
  h.ok(notes[#notes].msg:find('step 1/6 · thought: the log says', 1, true), 'the step is shown: ' .. notes[#notes].msg)
  step, position = step_to('next')
  h.eq(position, 2, 'position')
  h.ok(vim.api.nvim_buf_get_name(0):match('src/lease%.py$'), 'lease.py is open: ' .. vim.api.nvim_buf_get_name(0))
  h.eq(vim.api.nvim_win_get_cursor(0)[1], 1, 'the cursor on the region read')
  h.eq(marked(0), range(1, 12), 'lines read so far')
  h.ok(notes[#notes].msg:find('action bash: sed -n 1,12p src/lease.py', 1, true), notes[#notes].msg)
end)

h.step('first: the first step that read a labeled line, with everything read by then', function()
  local step, position = step_to('first')
  h.eq({ position, step.index, step.reads_label }, { 5, 4, true }, 'the first labeled read')
  h.ok(vim.api.nvim_buf_get_name(0):match('src/lease%.py$'), 'lease.py is open')
  h.eq(vim.api.nvim_win_get_cursor(0)[1], 10, 'the cursor on line 10')
  h.eq(marked(0), range(1, 20), 'lease.py read 1-20 by then')
  h.ok(notes[#notes].msg:find('(reads a labeled line)', 1, true), notes[#notes].msg)
  local server_buf = vim.fn.bufnr(vim.fs.joinpath(ws, 'src', 'server.py'))
  h.eq(#marked(server_buf), vim.api.nvim_buf_line_count(server_buf), 'server.py was read whole')
end)

h.step('prev: back to the step that read server.py; lease.py keeps only lines 1-12', function()
  local step, position = step_to('prev')
  h.eq({ position, step.index }, { 4, 3 }, 'one step back')
  h.ok(vim.api.nvim_buf_get_name(0):match('src/server%.py$'), 'server.py is open')
  local lease_buf = vim.fn.bufnr(vim.fs.joinpath(ws, 'src', 'lease.py'))
  h.eq(marked(lease_buf), range(1, 12), 'lease.py as read by step 3')
  vim.cmd('DistdebugReplay stop')
  h.eq(#marked(lease_buf), 0, 'stop clears the marks')
end)

h.finish()
