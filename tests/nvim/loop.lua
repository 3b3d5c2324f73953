--- The whole loop in a real Neovim through the plugin in editors/nvim: open a prepared workspace
--- of the tiny-lease fixture (labels show), run the offline agent with :DistdebugRun (its
--- predictions on exactly the lines of its diagnosis.json; lenses refreshed when it ends), show
--- an attempt with known blocks (as an external agent leaves it on disk) with its lenses and
--- colours, label a selection with :DistdebugLabel and see labels.json change, score with
--- :DistdebugScore and see hit / false-positive / missed, clear with :DistdebugClear.
local h = dofile(vim.fs.joinpath(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)), 'helpers.lua'))
local repo, bin = h.args()

local tmp = h.sandbox()
local ws = vim.fs.joinpath(tmp, 'ws')
local incident = vim.fs.joinpath(tmp, 'incident', 'tiny-lease')
local results = vim.fs.joinpath(tmp, 'results')
local lease
local client
local progress = {}
local diagnosis
local dd
-- Messages the plugin shows, kept for assertions (and off the test's output).
local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level or vim.log.levels.INFO })
end

local function errors_shown()
  return vim.tbl_filter(function(n)
    return n.level >= vim.log.levels.WARN
  end, notes)
end

--- Like h.wait, but a warning or error shown meanwhile fails the step at once with its text.
local function wait_unless_error(what, cond, ms)
  return h.wait(what, function()
    local shown_errors = errors_shown()
    if #shown_errors > 0 then
      error(('while waiting for %s, the plugin showed: %s'):format(what, shown_errors[1].msg), 0)
    end
    return cond()
  end, ms)
end

local function labels()
  return h.read_json(vim.fs.joinpath(incident, 'labels.json')).blocks
end

local function code_lines(rel, code)
  return vim.tbl_map(function(d)
    return d.lnum + 1
  end, h.diagnostics(ws, rel, code))
end

--- "file:start-end" of every distdebug diagnostic with `code` in the files, sorted.
local function shown(files, code)
  local out = {}
  for _, f in ipairs(files) do
    for _, d in ipairs(h.diagnostics(ws, f, code)) do
      -- An LSP range ending at column 0 covers only the lines before it.
      local last = (d.end_col == 0 and d.end_lnum > d.lnum) and d.end_lnum or d.end_lnum + 1
      table.insert(out, ('%s:%d-%d'):format(f, d.lnum + 1, last))
    end
  end
  table.sort(out)
  return out
end

local function blocks_text(blocks)
  local out = vim.tbl_map(function(b)
    return ('%s:%d-%d'):format(b.path, b.start_line, b.end_line)
  end, blocks)
  table.sort(out)
  return out
end

--- An attempt as an external agent leaves it: diagnosis.json and trajectory.json.
local function write_attempt(config, k, blocks)
  local dir = vim.fs.joinpath(results, config, 'tiny-lease', 'attempt-' .. k)
  vim.fn.mkdir(dir, 'p')
  vim.fn.writefile({ vim.json.encode({ incident = 'tiny-lease', summary = 'fixture', blocks = blocks }) }, vim.fs.joinpath(dir, 'diagnosis.json'))
  vim.fn.writefile({
    vim.json.encode({
      incident = 'tiny-lease',
      attempt = k,
      agent = config,
      model = vim.NIL,
      started_at = '',
      finished_at = '',
      exit = 'submitted',
      usage = { prompt_tokens = 0, completion_tokens = 0, cost_usd = 0 },
      steps = { { index = 0, kind = 'submit', text = #blocks .. ' blocks' } },
    }),
  }, vim.fs.joinpath(dir, 'trajectory.json'))
end

local function marks_by_group()
  local groups = {}
  for _, m in ipairs(require('distdebug.highlights').marks(lease)) do
    if m.hl then
      groups[m.hl] = groups[m.hl] or {}
      table.insert(groups[m.hl], m.row + 1)
    end
  end
  return groups
end

local FILES = { 'src/lease.py', 'src/server.py' }

h.step('prepare a workspace and set the plugin up', function()
  -- Labeling writes labels.json: work on a copy of the fixture.
  vim.fn.mkdir(vim.fs.dirname(incident), 'p')
  h.run({ 'cp', '-r', vim.fs.joinpath(repo, 'tests', 'fixtures', 'incidents', 'tiny-lease'), incident })
  h.run({ bin, 'prepare', incident, '--out', ws })
  vim.opt.runtimepath:prepend(vim.fs.joinpath(repo, 'editors', 'nvim'))
  vim.cmd('filetype on') -- -u NONE leaves detection off; vim.lsp.enable starts on FileType
  -- Behave like an older Neovim that ignores workspace/codeLens/refresh: lenses below can only
  -- come from the plugin's own refreshes.
  vim.lsp.handlers['workspace/codeLens/refresh'] = function()
    return vim.NIL
  end
  vim.api.nvim_create_autocmd('LspProgress', {
    callback = function(ev)
      table.insert(progress, ev.data.params.value.kind)
    end,
  })
  dd = require('distdebug').setup({
    path = bin,
    settings = { incident = incident, results = results, annotator = 'nvim-test' },
    progress = false,
  })
  for _, c in ipairs({ 'Open', 'Run', 'Cancel', 'Score', 'Compare', 'Label', 'Unlabel', 'Accept', 'UndoLabel', 'Status', 'ShowAttempt', 'Clear', 'Report', 'Trajectory', 'Agreement' }) do
    h.ok(vim.fn.exists(':Distdebug' .. c) == 2, ':Distdebug' .. c .. ' is defined')
  end
  for _, g in ipairs({ 'Predicted', 'Label', 'Hit', 'FalsePositive', 'Missed' }) do
    h.ok(vim.fn.hlexists('Distdebug' .. g) == 1, 'highlight group Distdebug' .. g .. ' is defined')
  end
end)

h.step('a file of the workspace attaches distdebug lsp, and its labels show; a file elsewhere does not', function()
  vim.cmd.edit(vim.fn.fnameescape(vim.fs.joinpath(repo, 'README.md')))
  local outside = vim.api.nvim_get_current_buf()
  vim.cmd.edit(vim.fn.fnameescape(vim.fs.joinpath(ws, 'src', 'lease.py')))
  lease = vim.api.nvim_get_current_buf()
  client = h.wait('the distdebug client to attach and initialize', function()
    local c = vim.lsp.get_clients({ name = 'distdebug', bufnr = lease })[1]
    return c and c.initialized and c
  end)
  h.eq(vim.fs.normalize(client.root_dir), vim.fs.normalize(ws), 'client root')
  h.eq(#vim.lsp.get_clients({ name = 'distdebug', bufnr = outside }), 0, 'clients on a file outside any workspace')
  h.ok(client.server_capabilities.codeLensProvider, 'the server offers code lenses')
  local want = blocks_text(labels())
  h.wait('label diagnostics ' .. table.concat(want, ', '), function()
    return vim.deep_equal(shown(FILES, 'label'), want)
  end)
  h.wait('labels coloured DistdebugLabel', function()
    return vim.tbl_contains(marks_by_group().DistdebugLabel or {}, labels()[1].start_line)
  end)
end)

h.step(':DistdebugRun baseline 1: progress, then predictions on exactly the lines of diagnosis.json', function()
  local refreshes, ended = 0, 0
  local real_refresh = vim.lsp.codelens.refresh
  vim.lsp.codelens.refresh = function(...)
    refreshes = refreshes + 1
    return real_refresh(...)
  end
  vim.api.nvim_create_autocmd('User', {
    pattern = 'DistdebugAttemptEnd',
    callback = function()
      ended = ended + 1
    end,
  })
  local before = refreshes
  vim.cmd('DistdebugRun baseline 1')
  local current = wait_unless_error('a finished current attempt in distdebug/status', function()
    local answer = vim.lsp.buf_request_sync(lease, 'distdebug/status', nil, 2000) or {}
    for _, r in pairs(answer) do
      for _, a in ipairs((r.result or {}).attempts or {}) do
        if a.current and a.state ~= 'queued' and a.state ~= 'running' then
          return a
        end
      end
    end
  end, 60000)
  h.eq(current.exit, 'submitted', 'exit of the attempt')
  local dirs = h.attempt_dirs(results)
  h.eq(#dirs, 1, 'attempt folders')
  diagnosis = h.read_json(vim.fs.joinpath(dirs[1], 'diagnosis.json'))
  local want = blocks_text(diagnosis.blocks)
  local files = vim.deepcopy(FILES)
  for _, b in ipairs(diagnosis.blocks) do
    if not vim.tbl_contains(files, b.path) then
      table.insert(files, b.path)
    end
  end
  local ok = pcall(h.wait, 'predicted diagnostics exactly on ' .. (#want > 0 and table.concat(want, ', ') or 'no line'), function()
    return vim.deep_equal(shown(files, 'predicted'), want)
  end)
  if not ok then
    error(('predicted diagnostics %s, expected %s'):format(vim.inspect(shown(files, 'predicted')), vim.inspect(want)))
  end
  h.wait('LspProgress begin and end', function()
    return vim.tbl_contains(progress, 'begin') and vim.tbl_contains(progress, 'end')
  end)
  h.wait('the plugin to refresh lenses when the attempt ended', function()
    return ended >= 1 and refreshes > before
  end)
  -- Notifications come through the server's ordered queue, a request's answer does not: wait.
  h.wait('distdebug/trajectoryStep to feed the live log', function()
    return #dd.state.trajectory > 0
  end)
  -- The lenses of the offline agent's blocks in the open file (read, not just refreshed).
  for _, b in ipairs(diagnosis.blocks) do
    if b.path == 'src/lease.py' then
      h.wait(('a baseline lens above lease.py:%d'):format(b.start_line), function()
        return vim.iter(vim.lsp.codelens.get(lease)):any(function(l)
          return l.range.start.line == b.start_line - 1 and l.command and l.command.title:find('agent baseline #1', 1, true) ~= nil
        end)
      end)
    end
  end
  if #diagnosis.blocks == 0 then
    io.stdout:write('# note: the offline agent predicted no block on tiny-lease\n')
  end
end)

h.step(':DistdebugShowAttempt ext#1: predictions, lenses and colours of an attempt with known blocks', function()
  write_attempt('ext', 1, {
    { path = 'src/lease.py', start_line = 15, end_line = 15, rationale = 'ttl in seconds times 1000', confidence = 0.8 },
    { path = 'src/server.py', start_line = 1, end_line = 2, rationale = 'imports' },
  })
  vim.cmd('DistdebugShowAttempt ext#1')
  wait_unless_error('ext #1 predictions', function()
    return vim.deep_equal(shown(FILES, 'predicted'), { 'src/lease.py:15-15', 'src/server.py:1-2' })
  end)
  h.eq(h.diagnostics(ws, 'src/lease.py', 'predicted')[1].message, 'ttl in seconds times 1000', 'the rationale is the message')
  -- No explicit refresh here: the plugin asks for lenses when the diagnostics change.
  local lens = h.wait('a lens above line 15', function()
    for _, l in ipairs(vim.lsp.codelens.get(lease)) do
      if l.range.start.line == 14 and l.command then
        return l
      end
    end
  end)
  h.ok(lens.command.title:find('ext #1', 1, true), 'the lens names the attempt: ' .. lens.command.title)
  h.ok(lens.command.title:find('ttl in seconds times 1000', 1, true), 'the lens shows the rationale: ' .. lens.command.title)
  local groups = h.wait('line 15 coloured DistdebugPredicted', function()
    local g = marks_by_group()
    return vim.tbl_contains(g.DistdebugPredicted or {}, 15) and g
  end)
  h.ok(vim.tbl_contains(groups.DistdebugLabel or {}, 13), 'labels keep their own colour: ' .. vim.inspect(groups))
end)

h.step(':DistdebugStatus lists the attempts', function()
  vim.cmd('DistdebugStatus')
  local buf = h.wait('the distdebug://status buffer', function()
    local b = vim.fn.bufnr('distdebug://status')
    return b ~= -1 and vim.api.nvim_buf_line_count(b) > 1 and b
  end)
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
  h.ok(text:find('incident: tiny-lease', 1, true), 'status names the incident: ' .. text)
  h.ok(text:find('baseline#1', 1, true) and text:find('* ext#1', 1, true), 'status lists baseline#1 and the current ext#1: ' .. text)
  vim.cmd('close')
  vim.api.nvim_set_current_buf(lease)
end)

h.step(':20,24DistdebugLabel labels the selection through the code action; labels.json changes', function()
  h.ok(client.server_capabilities.codeActionProvider, 'the server offers code actions')
  local before = labels()
  vim.cmd('20,24DistdebugLabel')
  local after = wait_unless_error('labels.json to gain a block', function()
    local now = labels()
    return #now > #before and now
  end)
  local added
  for _, b in ipairs(after) do
    local old = vim.iter(before):any(function(o)
      return o.path == b.path and o.start_line == b.start_line and o.end_line == b.end_line
    end)
    if not old then
      added = b
    end
  end
  h.ok(added, 'a block was added')
  h.eq(added.path, 'src/lease.py', 'path of the new label')
  h.ok(added.start_line <= 20 and added.end_line >= 24, ('the label covers lines 20-24 (got %d-%d)'):format(added.start_line, added.end_line))
  h.eq(added.annotator, 'nvim-test', 'annotator of the new label')
  h.wait('a label diagnostic on the new block', function()
    return vim.tbl_contains(code_lines('src/lease.py', 'label'), added.start_line)
  end)
end)

h.step(':DistdebugScore shows hits, false positives and misses', function()
  vim.cmd('DistdebugScore')
  local scores = wait_unless_error('diagnosis_scores.json', function()
    return h.read_json(vim.fs.joinpath(results, 'ext', 'tiny-lease', 'attempt-1', 'diagnosis_scores.json'))
  end)
  h.wait('hit on lease.py:15', function()
    return vim.deep_equal(shown({ 'src/lease.py' }, 'hit'), { 'src/lease.py:15-15' })
  end)
  h.wait('false-positive on server.py:1-2', function()
    return vim.deep_equal(shown({ 'src/server.py' }, 'false-positive'), { 'src/server.py:1-2' })
  end)
  local unreached = blocks_text(vim.tbl_filter(function(l)
    return not l.reached
  end, scores.labels))
  h.wait('missed on ' .. (#unreached > 0 and table.concat(unreached, ', ') or 'no label'), function()
    return vim.deep_equal(shown(FILES, 'missed'), unreached)
  end)
  h.eq(#shown(FILES, 'predicted'), 0, 'predicted diagnostics left after scoring')
  h.eq(#scores.labels, #labels(), 'labels scored')
  local pct = ('%.1f%%'):format(scores.block_coverage * 100)
  h.wait('the score shown as a message naming the attempt (ext #1)', function()
    return vim.iter(notes):any(function(n)
      return n.msg:find('ext #1: block coverage ' .. pct, 1, true) ~= nil
    end)
  end)
  local line = dd.statusline()
  h.ok(line:find('coverage ' .. pct, 1, true), 'statusline shows the block coverage: ' .. line)
  local groups = h.wait('line 15 coloured DistdebugHit', function()
    local g = marks_by_group()
    return vim.tbl_contains(g.DistdebugHit or {}, 15) and g
  end)
  if #unreached > 0 then
    h.ok(groups.DistdebugMissed, 'missed labels have their own colour: ' .. vim.inspect(groups))
  end
end)

h.step(':DistdebugClear: predictions go, labels stay', function()
  vim.cmd('DistdebugClear')
  wait_unless_error('no prediction left', function()
    return #shown(FILES, 'hit') + #shown(FILES, 'false-positive') + #shown(FILES, 'predicted') == 0
  end)
  h.eq(#shown(FILES, 'label'), #labels(), 'labels shown')
end)

h.step('no warning or error was shown along the way', function()
  h.eq(errors_shown(), {}, 'warnings and errors shown')
end)

h.finish()
vim.fn.delete(tmp, 'rf')
