--- distdebug.highlights: highlight groups per kind of block and a diagnostic handler that
--- colours the lines of distdebug diagnostics by their code (predicted, label, hit,
--- false-positive, missed), with a sign and an end-of-block tag, so the five kinds read apart
--- at a glance whatever their severity.
local config = require('distdebug.config')

local M = {}

--- Diagnostic code -> highlight group suffix.
M.kinds = {
  predicted = 'Predicted',
  label = 'Label',
  hit = 'Hit',
  ['false-positive'] = 'FalsePositive',
  missed = 'Missed',
}

local tags = {
  predicted = 'predicted',
  label = 'label',
  hit = 'hit',
  ['false-positive'] = 'false positive',
  missed = 'missed',
}

-- Dark-background friendly defaults; `default = true` lets a colour scheme or the user win.
local palette = {
  Predicted = { bg = '#1d2f4f', fg = '#7aa2f7', cterm_bg = 17, cterm_fg = 111 },
  Label = { bg = '#2e2340', fg = '#bb9af7', cterm_bg = 53, cterm_fg = 141 },
  Hit = { bg = '#1f3b2a', fg = '#9ece6a', cterm_bg = 22, cterm_fg = 114 },
  FalsePositive = { bg = '#2a2a2a', fg = '#7f7f7f', cterm_bg = 236, cterm_fg = 244 },
  Missed = { bg = '#45301a', fg = '#ff9e64', cterm_bg = 94, cterm_fg = 215 },
}

--- Defines DistdebugPredicted, DistdebugLabel, DistdebugHit, DistdebugFalsePositive,
--- DistdebugMissed (line background) and the same names with a `Sign` suffix (sign and tag).
function M.define()
  for suffix, c in pairs(palette) do
    vim.api.nvim_set_hl(0, 'Distdebug' .. suffix, { default = true, bg = c.bg, ctermbg = c.cterm_bg })
    vim.api.nvim_set_hl(0, 'Distdebug' .. suffix .. 'Sign', { default = true, fg = c.fg, ctermfg = c.cterm_fg, bold = true })
  end
end

--- The distdebug code of a diagnostic, or nil for other sources.
function M.code_of(d)
  if d.source ~= 'distdebug' then
    return nil
  end
  local code = d.code
  if code == nil and d.user_data and d.user_data.lsp then
    code = d.user_data.lsp.code
  end
  code = code and tostring(code)
  if code and M.kinds[code] then
    return code
  end
  return nil
end

local namespaces = {}
local function ns_for(diag_ns)
  if not namespaces[diag_ns] then
    namespaces[diag_ns] = vim.api.nvim_create_namespace('distdebug.blocks.' .. diag_ns)
  end
  return namespaces[diag_ns]
end

--- The extmarks drawn for one buffer (for tests and for :DistdebugStatus).
function M.marks(bufnr)
  local out = {}
  for _, ns in pairs(namespaces) do
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, ns, 0, -1, { details = true })) do
      table.insert(out, { row = m[2], end_row = m[4].end_row, hl = m[4].line_hl_group or m[4].hl_group, sign = m[4].sign_text })
    end
  end
  table.sort(out, function(a, b)
    return a.row < b.row
  end)
  return out
end

-- Buffers with diagnostics that were not loaded when the diagnostics came (the server
-- publishes for every affected file, opened or not): shown once they load.
local pending = {}

local function show_when_loaded(namespace, bufnr)
  local key = bufnr .. ':' .. namespace
  if pending[key] then
    return
  end
  pending[key] = true
  vim.api.nvim_create_autocmd('BufRead', {
    buffer = bufnr,
    once = true,
    callback = function()
      pending[key] = nil
      vim.schedule(function()
        if vim.api.nvim_buf_is_loaded(bufnr) then
          vim.diagnostic.show(namespace, bufnr)
        end
      end)
    end,
  })
end

M.handler = {
  show = function(namespace, bufnr, diagnostics, _)
    if not vim.api.nvim_buf_is_loaded(bufnr) then
      show_when_loaded(namespace, bufnr)
      return
    end
    local ns = ns_for(namespace)
    vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
    if not config.options.highlights then
      return
    end
    local last = vim.api.nvim_buf_line_count(bufnr) - 1
    for _, d in ipairs(diagnostics) do
      local code = M.code_of(d)
      if code then
        local group = 'Distdebug' .. M.kinds[code]
        local first = math.min(d.lnum, last)
        -- An LSP range that ends at column 0 of the next line covers only the lines before it.
        local end_row = d.end_lnum or d.lnum
        if end_row > first and (d.end_col or 0) == 0 then
          end_row = end_row - 1
        end
        end_row = math.min(end_row, last)
        local sign = (config.options.signs or {})[code]
        local mark = { end_row = end_row, line_hl_group = group, priority = 5 }
        if sign and sign ~= '' then
          mark.sign_text = sign
          mark.sign_hl_group = group .. 'Sign'
        end
        vim.api.nvim_buf_set_extmark(bufnr, ns, first, 0, mark)
        vim.api.nvim_buf_set_extmark(bufnr, ns, end_row, 0, {
          virt_text = { { ' ' .. (sign or '') .. ' ' .. tags[code], group .. 'Sign' } },
          virt_text_pos = 'eol',
          priority = 5,
        })
      end
    end
  end,
  hide = function(namespace, bufnr)
    if vim.api.nvim_buf_is_valid(bufnr) then
      vim.api.nvim_buf_clear_namespace(bufnr, ns_for(namespace), 0, -1)
    end
  end,
}

function M.setup()
  M.define()
  vim.diagnostic.handlers['distdebug/blocks'] = M.handler
  vim.api.nvim_create_autocmd('ColorScheme', {
    group = vim.api.nvim_create_augroup('distdebug.highlights', { clear = true }),
    callback = M.define,
  })
end

return M
