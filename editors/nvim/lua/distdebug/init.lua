--- distdebug for Neovim 0.10+: `require('distdebug').setup{}` registers `distdebug lsp` for
--- incident workspaces, defines the :Distdebug* commands, colours predicted blocks, labels,
--- hits, false positives and misses, follows progress through the standard LspProgress event
--- and refreshes code lenses when an attempt ends. The functions below are the commands'
--- implementation and a small API (each takes an optional callback `cb(err, result)`).
local config = require('distdebug.config')
local server = require('distdebug.server')
local highlights = require('distdebug.highlights')

local M = {}

--- What the statusline shows; updated from LspProgress and distdebug/trajectoryStep.
M.state = {
  progress = nil, -- { title, message, percentage } of the running work, nil when idle
  last_score = nil, -- the figures of the last score received
  trajectory = {}, -- lines of the live trajectory log
}

local function notify(msg, level)
  vim.notify('distdebug: ' .. msg, level or vim.log.levels.INFO)
end

--- The client to talk to, starting a detached one when no workspace is open yet.
local function client_or_start()
  local c = server.client()
  if c then
    return c
  end
  local started, err = server.start_detached(M._handlers, M._on_attach)
  if not started then
    return nil, err
  end
  return started
end

--- Calls `fn` once the client has finished its handshake (a client just started has not:
--- requests sent before it are refused). Gives up after ~10 s.
local function when_initialized(client, fn, fail, tries)
  if client.initialized then
    return fn()
  end
  tries = (tries or 0) + 1
  if tries > 200 or (client.is_stopped and client:is_stopped()) then
    return fail('the language server did not start (see :LspLog)')
  end
  vim.defer_fn(function()
    when_initialized(client, fn, fail, tries)
  end, 50)
end

--- Sends a request to the distdebug server; errors are shown and passed to `cb`.
function M.request(method, params, cb, what)
  local function fail(err)
    notify(err or 'no language server', vim.log.levels.ERROR)
    if cb then
      cb(err or 'no language server')
    end
  end
  local client, err = client_or_start()
  if not client then
    return fail(err)
  end
  when_initialized(client, function()
    server.request(client, method, params, function(e, result)
      if e then
        local msg = e.message or vim.inspect(e)
        -- The server's messages already name the command; others get the method in front.
        if not vim.startswith(msg, what or method) then
          msg = ('%s failed: %s'):format(what or method, msg)
        end
        notify(msg, vim.log.levels.ERROR)
      end
      if cb then
        cb(e and (e.message or vim.inspect(e)) or nil, result)
      end
    end, vim.api.nvim_get_current_buf())
  end, fail)
end

--- `workspace/executeCommand` with the command's arguments.
function M.execute(command, args, cb)
  M.request('workspace/executeCommand', { command = command, arguments = args or {} }, cb, command)
end

-- ---- lenses and progress --------------------------------------------------------------------

local function refresh_lenses(client_id)
  if not config.options.codelens then
    return
  end
  for _, c in ipairs(vim.lsp.get_clients({ name = server.name, id = client_id })) do
    if server.supports(c, 'textDocument/codeLens') then
      for buf in pairs(c.attached_buffers or {}) do
        if vim.api.nvim_buf_is_loaded(buf) then
          vim.lsp.codelens.refresh({ bufnr = buf })
        end
      end
    end
  end
end
M.refresh_lenses = refresh_lenses

-- Lenses follow the same view as the diagnostics: when distdebug's diagnostics of a buffer
-- change (a new attempt shown, scored, cleared, a label added), its lenses are asked for again.
-- Neovim 0.11 declares no workspace/codeLens/refresh support, so the server cannot ask.
local lens_pending = {}
local function on_diagnostics_changed(ev)
  if not config.options.codelens or lens_pending[ev.buf] then
    return
  end
  local c = vim.lsp.get_clients({ name = server.name, bufnr = ev.buf })[1]
  if not c or not server.supports(c, 'textDocument/codeLens') then
    return
  end
  lens_pending[ev.buf] = true
  vim.schedule(function()
    lens_pending[ev.buf] = nil
    if vim.api.nvim_buf_is_loaded(ev.buf) then
      vim.lsp.codelens.refresh({ bufnr = ev.buf })
    end
  end)
end

local function show_progress(text)
  -- One line that fits: a longer echo would stop Neovim at a hit-enter prompt.
  text = 'distdebug: ' .. text:gsub('^distdebug: ', ''):gsub('%s+', ' ')
  if config.options.progress == 'echo' then
    local room = math.max(vim.v.echospace - 1, 10)
    if vim.fn.strdisplaywidth(text) > room then
      text = vim.fn.strcharpart(text, 0, room - 1) .. '…'
    end
    vim.api.nvim_echo({ { text } }, false, {})
  elseif config.options.progress == 'notify' then
    vim.notify(text, vim.log.levels.INFO)
  end
end

local function on_progress(ev)
  local client = vim.lsp.get_client_by_id(ev.data.client_id)
  if not client or client.name ~= server.name then
    return
  end
  local value = ev.data.params and ev.data.params.value or {}
  if value.kind == 'begin' then
    M.state.progress = { title = value.title, message = value.message, percentage = value.percentage }
  elseif value.kind == 'report' then
    M.state.progress = vim.tbl_extend('force', M.state.progress or {}, {
      message = value.message,
      percentage = value.percentage,
    })
  elseif value.kind == 'end' then
    M.state.progress = nil
    -- An attempt ended: its lenses are new. Older Neovims ignore workspace/codeLens/refresh,
    -- so the plugin refreshes them itself; listeners may hook User DistdebugAttemptEnd.
    refresh_lenses(client.id)
    vim.api.nvim_exec_autocmds('User', { pattern = 'DistdebugAttemptEnd', modeline = false, data = value })
  end
  local text = table.concat(vim.tbl_filter(function(s)
    return s ~= nil and s ~= ''
  end, { value.title or (M.state.progress and M.state.progress.title), value.message }), ': ')
  if text ~= '' then
    show_progress(text)
  end
  pcall(vim.cmd.redrawstatus)
end

--- A step of a running attempt (distdebug/trajectoryStep): appended to the live log that
--- :DistdebugTrajectory shows.
local function on_step(_, params)
  params = params or {}
  local step = params.step or params
  local text = type(step.text) == 'string' and vim.split(step.text, '\n')[1] or ''
  local line = ('%s #%s step %s: %s %s %s'):format(
    params.config or '',
    params.attempt or '?',
    step.index or '?',
    step.kind or '',
    step.tool or '',
    text
  )
  table.insert(M.state.trajectory, line)
  local buf = vim.fn.bufnr('distdebug://trajectory')
  if buf ~= -1 and vim.api.nvim_buf_is_loaded(buf) then
    vim.bo[buf].modifiable = true
    vim.api.nvim_buf_set_lines(buf, -1, -1, false, { line })
    vim.bo[buf].modifiable = false
  end
  pcall(vim.cmd.redrawstatus)
  return vim.NIL
end

M._handlers = {
  ['distdebug/trajectoryStep'] = on_step,
}

M._on_attach = function(client, bufnr)
  if config.options.highlights then
    -- The plugin's signs tell the kinds apart; Neovim's severity signs would hide them.
    vim.diagnostic.config({ signs = false }, vim.lsp.diagnostic.get_namespace(client.id))
  end
  if config.options.codelens and server.supports(client, 'textDocument/codeLens') then
    vim.lsp.codelens.refresh({ bufnr = bufnr })
  end
end

--- For a statusline: the run ("distdebug: attempt 1/3, step 4") or the last score.
function M.statusline()
  local p = M.state.progress
  if p then
    return 'distdebug: ' .. (p.message or p.title or 'working')
  end
  local s = M.state.last_score
  if s and type(s.block_coverage) == 'number' then
    return ('distdebug: coverage %.1f%%, precision %.1f%%'):format(s.block_coverage * 100, (s.block_precision or 0) * 100)
  end
  return ''
end

-- ---- the commands' implementation --------------------------------------------------------------

--- Incidents from `distdebug incidents list` (id, system, language, category, #labels).
function M.list_incidents()
  local bin, err = server.find_binary(server.root_of(0))
  if not bin then
    return nil, err
  end
  local args = { bin, 'incidents', 'list' }
  local dir = (config.options.settings or {}).incidents
  if dir and dir ~= '' then
    vim.list_extend(args, { '--dir', dir })
  end
  local res = vim.system(args, { text = true }):wait()
  if res.code ~= 0 then
    return nil, vim.trim(res.stderr or '')
  end
  local out = {}
  for _, line in ipairs(vim.split(res.stdout or '', '\n', { trimempty = true })) do
    local f = vim.split(line, '\t')
    table.insert(out, { id = f[1], system = f[2], language = f[3], category = f[4], labels = f[5] })
  end
  return out
end

--- Prepares and opens an incident (an id or a folder); without one, asks which.
function M.open(incident, cb)
  if incident and incident ~= '' then
    M.execute('distdebug.openIncident', { { incident = incident } }, function(err, result)
      if not err then
        local where = type(result) == 'table' and (result.workspace or result.root or result.path) or result
        notify(('opened %s%s'):format(incident, type(where) == 'string' and (' at ' .. where) or ''))
      end
      if cb then
        cb(err, result)
      end
    end)
    return
  end
  local list, err = M.list_incidents()
  if not list then
    notify(err or 'cannot list incidents', vim.log.levels.ERROR)
    return
  end
  vim.ui.select(list, {
    prompt = 'distdebug: open incident',
    format_item = function(i)
      return ('%s  %s (%s, %s, %s labels)'):format(i.id, i.system or '', i.language or '', i.category or '', i.labels or '?')
    end,
  }, function(choice)
    if choice then
      M.open(choice.id, cb)
    end
  end)
end

--- Runs attempts: opts = { agent, attempts, model }.
function M.run(opts, cb)
  opts = opts or {}
  local params = { agent = opts.agent or 'baseline', attempts = tonumber(opts.attempts) or config.options.attempts }
  -- A model given here goes to any agent; the configured default only to the model agent.
  local model = opts.model
  if (model == nil or model == '') and params.agent == 'llm' then
    model = (config.options.model or {}).name
  end
  if model and model ~= '' then
    params.model = model
  end
  M.execute('distdebug.runAgent', { params }, cb)
end

function M.cancel(cb)
  M.execute('distdebug.cancel', {}, cb)
end

--- How an attempt is named to the user: "baseline #1", with its configuration when that is
--- not the agent's name ("llm #2 (llm-gpt4)"). Score answers carry `config` and `agent`.
function M.attempt_name(a)
  local who = a.agent or a.config or 'agent'
  local cfg = (a.config and a.agent and a.config ~= a.agent) and (' (' .. a.config .. ')') or ''
  return ('%s #%s%s'):format(who, a.attempt or '?', cfg)
end

--- Scores the current attempt (or every finished one with opts.all) and remembers the figures.
function M.score(opts, cb)
  local args = (opts and opts.all) and { { all = true } } or {}
  M.execute('distdebug.score', args, function(err, result)
    if not err and result ~= nil then
      -- The server answers the list of diagnosis_scores.json objects (docs/lsp.md).
      local list = vim.islist(result) and result or { result }
      local lines = {}
      for _, s in ipairs(list) do
        if type(s) == 'table' and type(s.block_coverage) == 'number' then
          table.insert(lines, ('%s: block coverage %.1f%%, block precision %.1f%%, file coverage %.1f%%'):format(
            M.attempt_name(s),
            s.block_coverage * 100,
            (s.block_precision or 0) * 100,
            (s.file_coverage or 0) * 100
          ))
        end
      end
      -- The statusline shows the first (the current attempt's when only it was scored).
      if type(list[1]) == 'table' and type(list[1].block_coverage) == 'number' then
        M.state.last_score = list[1]
      end
      if #lines > 0 then
        notify(table.concat(lines, '\n'))
      end
      pcall(vim.cmd.redrawstatus)
    end
    if cb then
      cb(err, result)
    end
  end)
end

--- `distdebug/status`: the incident, its attempts and the current one.
function M.status(cb)
  -- The request takes no params (an empty object is refused).
  M.request('distdebug/status', nil, cb)
end

--- An attempt reference from "config#k", "k" or a table.
local function attempt_ref(a)
  if type(a) == 'table' then
    return a
  end
  local cfg, k = tostring(a):match('^(.-)#(%d+)$')
  if k then
    return { config = cfg, attempt = tonumber(k) }
  end
  return { attempt = tonumber(a) }
end
M.attempt_ref = attempt_ref

function M.show_attempt(a, cb)
  M.execute('distdebug.showAttempt', { attempt_ref(a) }, cb)
end

--- Clears the current attempt: its predictions go, labels stay.
function M.clear_attempt(cb)
  M.execute('distdebug.clearAttempt', {}, cb)
end

function M.compare(a, b, cb)
  M.execute('distdebug.compare', { { a = attempt_ref(a), b = attempt_ref(b) } }, cb)
end

--- Steps through the current attempt: `how` is 'next', 'prev', 'first' (the first step that
--- read a labeled line) or 'stop'. `cb(err, step, position)`.
function M.replay(how, cb)
  local replay = require('distdebug.replay')
  if how == 'stop' then
    replay.stop()
    return cb and cb(nil)
  end
  replay.move(function(method, params, done)
    M.request(method, params, done)
  end, how or 'next', cb)
end

function M.undo_label(cb)
  M.execute('distdebug.undoLabel', {}, cb)
end

function M.agreement(cb)
  M.request('distdebug/agreement', nil, function(err, result)
    if not err then
      M.show_lines('agreement', vim.split(vim.inspect(result), '\n'))
    end
    if cb then
      cb(err, result)
    end
  end)
end

--- Runs a code action offered by the server on lines l1..l2 (1-based) of the current buffer,
--- the first whose lower-cased title `match` accepts (a Lua pattern or a predicate).
--- Used by :DistdebugLabel, :DistdebugUnlabel and :DistdebugAccept.
function M.code_action(match, l1, l2, cb)
  local accepts = type(match) == 'function' and match or function(title)
    return title:find(match) ~= nil
  end
  local bufnr = vim.api.nvim_get_current_buf()
  local client = vim.lsp.get_clients({ name = server.name, bufnr = bufnr })[1]
  local function fail(msg)
    notify(msg, vim.log.levels.WARN)
    if cb then
      cb(msg)
    end
  end
  if not client then
    return fail('this buffer is not in an incident workspace with a running server')
  end
  local last = vim.api.nvim_buf_get_lines(bufnr, l2 - 1, l2, false)[1] or ''
  local range = {
    start = { line = l1 - 1, character = 0 },
    ['end'] = { line = l2 - 1, character = server.line_length(last, client.offset_encoding) },
  }
  local diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr, { lnum = nil })) do
    if d.source == 'distdebug' and d.lnum <= l2 - 1 and (d.end_lnum or d.lnum) >= l1 - 1 and d.user_data and d.user_data.lsp then
      table.insert(diagnostics, d.user_data.lsp)
    end
  end
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = range,
    context = { diagnostics = diagnostics, triggerKind = 1 },
  }
  server.request(client, 'textDocument/codeAction', params, function(err, actions)
    if err then
      return fail('code actions failed: ' .. (err.message or vim.inspect(err)))
    end
    local matching = {}
    for _, a in ipairs(actions or {}) do
      if accepts(a.title:lower()) then
        table.insert(matching, a)
      end
    end
    if #matching == 0 then
      local titles = vim.tbl_map(function(a)
        return a.title
      end, actions or {})
      return fail(('no such code action here (offered: %s)'):format(#titles > 0 and table.concat(titles, '; ') or 'none'))
    end
    M.apply_action(client, matching[1], cb)
  end, bufnr)
end

--- Applies a code action: resolves it when it comes bare, applies its edit, runs its command.
function M.apply_action(client, action, cb)
  local function run(a)
    if a.edit then
      vim.lsp.util.apply_workspace_edit(a.edit, client.offset_encoding or 'utf-16')
    end
    local command = a.command
    if type(command) == 'string' then -- a bare Command
      command = a
    end
    if command and command.command then
      server.request(client, 'workspace/executeCommand', { command = command.command, arguments = command.arguments }, function(err, result)
        if err then
          notify(('%s failed: %s'):format(command.command, err.message or vim.inspect(err)), vim.log.levels.ERROR)
        end
        if cb then
          cb(err and (err.message or vim.inspect(err)) or nil, result)
        end
      end)
    elseif cb then
      cb(nil, nil)
    end
  end
  if not action.edit and not action.command and server.supports(client, 'codeAction/resolve') then
    server.request(client, 'codeAction/resolve', action, function(err, resolved)
      if err then
        notify('resolving the code action failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
        if cb then
          cb(err.message or 'resolve failed')
        end
        return
      end
      run(resolved or action)
    end)
  else
    run(action)
  end
end

--- Shows lines in a scratch buffer named distdebug://<name>.
function M.show_lines(name, lines)
  local bufname = 'distdebug://' .. name
  local buf = vim.fn.bufnr(bufname)
  if buf == -1 then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, bufname)
    vim.bo[buf].bufhidden = 'hide'
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.cmd('botright sbuffer ' .. buf)
  return buf
end

--- Opens the incident's bug report (or an evidence file) of the current workspace.
function M.report(which)
  local root = server.root_of(0) or (server.client() and server.client().root_dir)
  if not root then
    notify('not inside an incident workspace', vim.log.levels.WARN)
    return
  end
  local ok, info = pcall(function()
    return vim.json.decode(table.concat(vim.fn.readfile(vim.fs.joinpath(root, '.distdebug', 'workspace.json')), '\n'))
  end)
  if not ok then
    notify('cannot read .distdebug/workspace.json: ' .. tostring(info), vim.log.levels.ERROR)
    return
  end
  local files = { info.report or '.distdebug/report.md' }
  vim.list_extend(files, info.evidence or {})
  local function open(rel)
    vim.cmd.edit(vim.fn.fnameescape(vim.fs.joinpath(root, rel)))
  end
  if which and which ~= '' then
    for _, f in ipairs(files) do
      if f == which or vim.fs.basename(f) == which then
        return open(f)
      end
    end
    notify(('no report or evidence file %q'):format(which), vim.log.levels.WARN)
  elseif #files == 1 then
    open(files[1])
  else
    vim.ui.select(files, { prompt = 'distdebug: report and evidence' }, function(f)
      if f then
        open(f)
      end
    end)
  end
end

--- Why this Neovim cannot run the plugin (older than 0.10), or nil. `v` is `vim.version()`.
function M.version_refusal(v)
  if v.major > 0 or v.minor >= 10 then
    return nil
  end
  return ('distdebug.nvim needs Neovim 0.10 or newer; this is %d.%d.%d'):format(v.major, v.minor, v.patch)
end

--- Registers the server, highlight groups, autocommands and user commands.
--- @param opts distdebug.Options|nil
function M.setup(opts)
  local refused = M.version_refusal(vim.version())
  if refused then
    -- One clear line instead of errors from APIs this Neovim lacks (LspProgress, vim.islist…).
    vim.api.nvim_echo({ { refused, 'WarningMsg' } }, true, {})
    return M
  end
  config.set(opts)
  highlights.setup()
  local group = vim.api.nvim_create_augroup('distdebug', { clear = true })
  vim.api.nvim_create_autocmd('LspProgress', { group = group, callback = on_progress })
  vim.api.nvim_create_autocmd('DiagnosticChanged', { group = group, callback = on_diagnostics_changed })
  if config.options.codelens then
    vim.api.nvim_create_autocmd('BufEnter', {
      group = group,
      callback = function(ev)
        local c = vim.lsp.get_clients({ name = server.name, bufnr = ev.buf })[1]
        if c and server.supports(c, 'textDocument/codeLens') then
          vim.lsp.codelens.refresh({ bufnr = ev.buf })
        end
      end,
    })
  end
  server.register(M._handlers, M._on_attach)
  require('distdebug.commands').define(M)
  M._setup_done = true
  return M
end

return M
