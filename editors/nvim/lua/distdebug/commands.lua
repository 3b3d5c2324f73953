--- distdebug.commands: the :Distdebug* user commands, thin wrappers over the functions of
--- require('distdebug') so that everything a command does can also be called from Lua.
local M = {}

--- Title matchers for the labeling code actions (issue 8's titles, lower-cased).
M.actions = {
  label = function(t)
    return t:find('label as causal') ~= nil and t:find('exact') == nil
  end,
  label_exact = function(t)
    return t:find('label') ~= nil and t:find('exact') ~= nil
  end,
  unlabel = 'remove label',
  accept = 'accept',
  add_mine = 'add to my diagnosis',
  remove_mine = 'remove from my diagnosis',
}

local function complete_list(list)
  return function(lead)
    return vim.tbl_filter(function(x)
      return vim.startswith(x, lead)
    end, list)
  end
end

--- Attempt names ("config#k") from the server, for completion; empty when it does not answer.
local function attempt_names()
  local ok, answer = pcall(vim.lsp.buf_request_sync, 0, 'distdebug/status', nil, 500)
  local names = {}
  for _, r in pairs(ok and answer or {}) do
    for _, a in ipairs((r.result or {}).attempts or {}) do
      table.insert(names, ('%s#%s'):format(a.config or '', a.attempt or ''))
    end
  end
  return names
end

function M.define(dd)
  local cmd = vim.api.nvim_create_user_command

  cmd('DistdebugOpen', function(a)
    dd.open(a.args)
  end, {
    nargs = '?',
    desc = 'distdebug: prepare and open an incident (an id or a folder)',
    complete = function(lead)
      local list = dd.list_incidents() or {}
      return complete_list(vim.tbl_map(function(i)
        return i.id
      end, list))(lead)
    end,
  })

  cmd('DistdebugRun', function(a)
    local agent, attempts, model = (table.unpack or unpack)(a.fargs)
    if agent then
      dd.run({ agent = agent, attempts = attempts, model = model })
      return
    end
    vim.ui.select(require('distdebug.config').options.agents, { prompt = 'distdebug: agent' }, function(choice)
      if choice then
        vim.ui.input({ prompt = 'attempts: ', default = tostring(require('distdebug.config').options.attempts) }, function(n)
          if n then
            dd.run({ agent = choice, attempts = n })
          end
        end)
      end
    end)
  end, {
    nargs = '*',
    desc = 'distdebug: run an agent: [agent] [attempts] [model]',
    complete = function(lead, line)
      if #vim.split(line, '%s+', { trimempty = true }) <= 2 and not line:match('%s%S+%s') then
        return complete_list(require('distdebug.config').options.agents)(lead)
      end
      return {}
    end,
  })

  cmd('DistdebugCancel', function()
    dd.cancel()
  end, { desc = 'distdebug: cancel the running attempts' })

  cmd('DistdebugScore', function(a)
    dd.score({ all = a.args == 'all' })
  end, { nargs = '?', complete = complete_list({ 'all' }), desc = 'distdebug: score the current attempt (or all)' })

  cmd('DistdebugStatus', function()
    dd.status(function(err, result)
      if not err then
        local inc = (result or {}).incident
        local lines = {
          type(inc) == 'table' and ('incident: %s (%s) at %s'):format(inc.id, inc.system or '', inc.workspace or '')
            or 'incident: none open',
        }
        for _, at in ipairs((result or {}).attempts or {}) do
          table.insert(lines, ('%s%s#%s  %s  %s  %s blocks  %s steps%s'):format(
            at.current and '* ' or '  ',
            at.config or '',
            at.attempt or '?',
            at.agent or '',
            at.state or '',
            at.blocks or 0,
            at.steps or 0,
            at.exit and at.exit ~= vim.NIL and ('  exit ' .. at.exit) or ''
          ))
        end
        dd.show_lines('status', lines)
      end
    end)
  end, { desc = 'distdebug: the incident and its attempts' })

  cmd('DistdebugShowAttempt', function(a)
    dd.show_attempt(a.args)
  end, {
    nargs = 1,
    complete = function(lead)
      return complete_list(attempt_names())(lead)
    end,
    desc = 'distdebug: make an attempt current (config#k)',
  })

  cmd('DistdebugClear', function()
    dd.clear_attempt()
  end, { desc = 'distdebug: clear the current attempt (labels stay)' })

  cmd('DistdebugCompare', function(a)
    if #a.fargs ~= 2 then
      vim.notify('distdebug: :DistdebugCompare takes two attempts, e.g. human-ann#1 baseline#2', vim.log.levels.WARN)
      return
    end
    dd.compare(a.fargs[1], a.fargs[2])
  end, {
    nargs = '+',
    complete = function(lead)
      return complete_list(attempt_names())(lead)
    end,
    desc = 'distdebug: compare two attempts (config#k config#k)',
  })

  cmd('DistdebugLabel', function(a)
    dd.code_action(a.args == 'exact' and M.actions.label_exact or M.actions.label, a.line1, a.line2)
  end, { range = true, nargs = '?', complete = complete_list({ 'exact' }), desc = 'distdebug: label the selected lines as a causal block' })

  cmd('DistdebugUnlabel', function(a)
    dd.code_action(M.actions.unlabel, a.line1, a.line2)
  end, { range = true, desc = 'distdebug: remove the label under the cursor' })

  cmd('DistdebugAccept', function(a)
    dd.code_action(M.actions.accept, a.line1, a.line2)
  end, { range = true, desc = 'distdebug: accept the predicted block under the cursor as a label' })

  cmd('DistdebugMine', function(a)
    dd.code_action(a.bang and M.actions.remove_mine or M.actions.add_mine, a.line1, a.line2)
  end, { range = true, bang = true, desc = "distdebug: add the lines to my diagnosis (! removes them)" })

  cmd('DistdebugUndoLabel', function()
    dd.undo_label()
  end, { desc = 'distdebug: undo the last label change' })

  cmd('DistdebugAgreement', function()
    dd.agreement()
  end, { desc = 'distdebug: agreement between annotators' })

  cmd('DistdebugReport', function(a)
    dd.report(a.args)
  end, { nargs = '?', desc = 'distdebug: open the bug report or an evidence file' })

  cmd('DistdebugTrajectory', function()
    local buf = dd.show_lines('trajectory', dd.state.trajectory)
    vim.bo[buf].filetype = 'log'
  end, { desc = 'distdebug: the live log of the running attempt' })

  cmd('DistdebugReplay', function(a)
    dd.replay(a.args ~= '' and a.args or 'next')
  end, {
    nargs = '?',
    desc = 'distdebug: step through the current attempt (next, prev, first labeled read, stop)',
    complete = complete_list({ 'next', 'prev', 'first', 'stop' }),
  })

  cmd('DistdebugLenses', function()
    dd.refresh_lenses()
  end, { desc = 'distdebug: refresh code lenses' })
end

return M
