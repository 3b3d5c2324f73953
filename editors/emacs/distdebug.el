;;; distdebug.el --- distdebug's language server in Emacs, through eglot  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, languages

;;; Commentary:

;; distdebug prepares incident workspaces of distributed-system failures, runs agents that
;; localize the causal code, and scores them against human labels.  This package registers
;; `distdebug lsp' with eglot for the files of an incident workspace (a folder made by
;; `distdebug prepare', holding `.distdebug/workspace.json') and never elsewhere: in other
;; projects the server eglot would have used anyway is used.  It adds commands for the loop
;; (run an agent, score, label and unlabel a region, accept a prediction, show the bug report,
;; replay an attempt step by step) and colours the lines of each diagnostic code: `predicted',
;; `label', `hit', `false-positive' and `missed'.
;;
;;   (add-to-list 'load-path "/path/to/distdebug/editors/emacs")
;;   (require 'distdebug)
;;   (setq distdebug-settings '(:incident "/path/to/incidents/tiny-lease" :annotator "me"))
;;   (distdebug-setup)
;;
;; docs/editors.md describes the commands; docs/lsp.md the server.

;;; Code:

(require 'cl-lib)
(require 'eglot)
(require 'flymake)
(require 'jsonrpc)
(require 'project)
(require 'subr-x)

(defgroup distdebug nil
  "distdebug's language server through eglot."
  :group 'tools
  :prefix "distdebug-")

(defcustom distdebug-program nil
  "The distdebug binary.
nil: `distdebug' on PATH, then target/release/distdebug and
target/debug/distdebug in a folder above the workspace or `default-directory'."
  :type '(choice (const :tag "Find it" nil) file))

(defcustom distdebug-settings nil
  "Settings sent to the server as its initializationOptions (a plist).
Keys as in docs/lsp.md: :incident (the incident folder with labels.json),
:annotator, :results, :incidents, :workspaces, :offline, :severity,
:labelSeverity, :lookedHints.  Paths should be absolute."
  :type 'plist)

(defcustom distdebug-major-modes
  '(python-mode python-ts-mode java-mode java-ts-mode go-mode go-ts-mode rust-mode
    rust-ts-mode scala-mode c++-mode c++-ts-mode c-mode c-ts-mode)
  "Major modes whose files in an incident workspace are served by distdebug.
The languages of the incidents; a mode that is not installed does no harm."
  :type '(repeat symbol))

(defcustom distdebug-auto-start t
  "Start distdebug (through `eglot-ensure') when a workspace file is visited."
  :type 'boolean)

(defcustom distdebug-tags t
  "Show a tag such as \"✔ hit\" at the end of each block's last line."
  :type 'boolean)

(defface distdebug-predicted
  '((((background dark)) :background "#1d2b45" :extend t)
    (t :background "#dde8ff" :extend t))
  "A block the current attempt names as causal (code `predicted').")

(defface distdebug-label
  '((((background dark)) :background "#33254a" :extend t)
    (t :background "#efe3ff" :extend t))
  "A human-labeled causal block (code `label').")

(defface distdebug-hit
  '((((background dark)) :background "#1f3b24" :extend t)
    (t :background "#dcf5dc" :extend t))
  "After scoring: a predicted block that touches a label (code `hit').")

(defface distdebug-false-positive
  '((t :foreground "gray55" :slant italic :extend t))
  "After scoring: a predicted block that touches no label (code `false-positive').")

(defface distdebug-missed
  '((((background dark)) :background "#4a3113" :extend t)
    (t :background "#ffe8cc" :extend t))
  "After scoring: a label no prediction reached (code `missed').")

(defface distdebug-read
  '((t :underline (:style wave :color "gray60")))
  "While replaying an attempt: lines the agent had read so far.")

(defconst distdebug-kinds
  '(("predicted" distdebug-predicted "◆ predicted" 30)
    ("hit" distdebug-hit "✔ hit" 30)
    ("false-positive" distdebug-false-positive "✘ false positive" 30)
    ("label" distdebug-label "● label" 20)
    ("missed" distdebug-missed "○ missed" 20))
  "Each diagnostic code: its face, its end-of-block tag and its overlay priority.")

;;;; Finding the workspace and the binary

(defun distdebug-workspace-root (&optional dir)
  "The incident workspace holding DIR (default: this buffer's folder), or nil."
  (let ((dir (or dir (and buffer-file-name (file-name-directory buffer-file-name))
                 default-directory)))
    (when-let ((root (and dir (locate-dominating-file dir ".distdebug/workspace.json"))))
      (file-name-as-directory (expand-file-name root)))))

(defun distdebug--program (root)
  "The distdebug binary for a workspace at ROOT, or an error saying how to get one."
  (or (and distdebug-program
           (if (file-executable-p distdebug-program)
               distdebug-program
             (user-error "distdebug: `distdebug-program' is %s, which is not an executable"
                         distdebug-program)))
      (executable-find "distdebug")
      (cl-loop for base in (delq nil (list root default-directory))
               thereis (cl-loop for kind in '("release" "debug")
                                thereis
                                (when-let ((top (locate-dominating-file
                                                 base (format "target/%s/distdebug" kind))))
                                  (expand-file-name (format "target/%s/distdebug" kind) top))))
      (user-error "distdebug: no distdebug binary: set `distdebug-program', or run cargo install --path server")))

;;;; Registration with eglot

(defclass distdebug-server (eglot-lsp-server) ()
  :documentation "The distdebug language server.")

(cl-defmethod eglot-initialization-options ((_server distdebug-server))
  (or distdebug-settings eglot--{}))

(defvar distdebug--entry nil
  "Our entry in `eglot-server-programs', once `distdebug-setup' has added it.")

(defun distdebug--other-contact (interactive)
  "The contact eglot would use without distdebug, for buffers outside workspaces."
  (let* ((eglot-server-programs (cdr (memq distdebug--entry eglot-server-programs)))
         (contact (nth 2 (eglot--lookup-mode major-mode))))
    (cond ((functionp contact) (funcall contact interactive))
          (contact)
          (t (user-error "distdebug: %s is not in an incident workspace, and eglot has no other server for %s"
                         (or buffer-file-name (buffer-name)) major-mode)))))

(defun distdebug--contact (interactive)
  "Eglot's contact for this buffer: distdebug in a workspace, else what eglot had."
  (if-let ((root (distdebug-workspace-root)))
      (list 'distdebug-server (distdebug--program root) "lsp")
    (distdebug--other-contact interactive)))

(defun distdebug--project (dir)
  "A project rooted at the incident workspace holding DIR, for eglot's purposes."
  (when-let ((root (and (bound-and-true-p eglot-lsp-context) (distdebug-workspace-root dir))))
    (cons 'transient root)))

(defun distdebug--served-p ()
  "Whether this buffer is a workspace file that distdebug serves."
  (and buffer-file-name
       (distdebug-workspace-root)
       (not (string-match-p "/\\.distdebug/" buffer-file-name))
       (apply #'derived-mode-p distdebug-major-modes)))

(defun distdebug--maybe-start ()
  "`find-file-hook': start distdebug for the files of an incident workspace."
  (when (and distdebug-auto-start (distdebug--served-p))
    (eglot-ensure)))

;;;###autoload
(defun distdebug-setup ()
  "Register distdebug with eglot and start it in the files of incident workspaces."
  (interactive)
  (unless (memq distdebug--entry eglot-server-programs)
    (setq distdebug--entry (cons distdebug-major-modes #'distdebug--contact))
    (push distdebug--entry eglot-server-programs))
  (add-hook 'project-find-functions #'distdebug--project)
  (add-hook 'find-file-hook #'distdebug--maybe-start))

;;;###autoload
(defun distdebug-connect ()
  "Start (or restart) distdebug for this workspace file now."
  (interactive)
  (distdebug-setup)
  (unless (distdebug-workspace-root)
    (user-error "distdebug: %s is not in an incident workspace (no .distdebug/workspace.json above it)"
                (or buffer-file-name default-directory)))
  (apply #'eglot (eglot--guess-contact)))

(defun distdebug--server ()
  "The distdebug server of this buffer, or an error."
  (let ((s (eglot-current-server)))
    (unless (cl-typep s 'distdebug-server)
      (user-error "distdebug: no distdebug server for this buffer (M-x distdebug-connect in a workspace file)"))
    s))

;;;; Talking to the server

(defvar distdebug-last-result nil
  "The answer of the last distdebug command, for callers and tests.")

(defun distdebug-execute (command &optional args)
  "Run the server's COMMAND with the argument plist ARGS and return its answer."
  (setq distdebug-last-result
        (eglot-execute-command (distdebug--server) command (if args (vector args) []))))

(defun distdebug--lines (beg end)
  "The 1-based first and last lines of the region BEG END.
A region that ends at the start of a line does not include that line."
  (let* ((first (line-number-at-pos beg t))
         (last (line-number-at-pos end t)))
    (when (and (> last first) (save-excursion (goto-char end) (bolp)))
      (setq last (1- last)))
    (cons first last)))

(defun distdebug--region ()
  "The active region, or the current line."
  (if (use-region-p)
      (list (region-beginning) (region-end))
    (list (line-beginning-position) (line-end-position))))

(defun distdebug-attempt-name (a)
  "How attempt A (a plist with :config :agent :attempt) is named: \"baseline #1\"."
  (let ((config (plist-get a :config)) (agent (plist-get a :agent)))
    (format "%s #%s%s" (or agent config "agent") (or (plist-get a :attempt) "?")
            (if (and config agent (not (equal config agent))) (format " (%s)" config) ""))))

(defun distdebug--percent (x)
  (format "%.1f%%" (* 100 (or x 0))))

(defun distdebug-run (agent attempts)
  "Run AGENT (baseline, llm or command) for ATTEMPTS attempts."
  (interactive (list (completing-read "distdebug: agent: " '("baseline" "llm" "command") nil t nil nil "baseline")
                     (read-number "distdebug: attempts: " 1)))
  (let ((r (distdebug-execute "distdebug.runAgent" (list :agent agent :attempts attempts))))
    (message "distdebug: %s started (%s, attempts %s)" (plist-get r :run) (plist-get r :config)
             (mapconcat (lambda (k) (format "%s" k)) (plist-get r :attempts) ", "))
    r))

(defun distdebug-cancel ()
  "Cancel the running attempts."
  (interactive)
  (distdebug-execute "distdebug.cancel"))

(defun distdebug-score (&optional all)
  "Score the current attempt (with a prefix argument: ALL finished attempts)."
  (interactive "P")
  (let* ((r (distdebug-execute "distdebug.score" (and all (list :all t))))
         (lines (mapcar (lambda (s)
                          (format "%s: block coverage %s, block precision %s, file coverage %s"
                                  (distdebug-attempt-name s)
                                  (distdebug--percent (plist-get s :block_coverage))
                                  (distdebug--percent (plist-get s :block_precision))
                                  (distdebug--percent (plist-get s :file_coverage))))
                        r)))
    (when lines
      (message "distdebug: %s" (string-join lines "\n")))
    r))

(defun distdebug-label-region (beg end &optional exact)
  "Label the lines of BEG END as a causal block.
The server snaps them to the enclosing block; with a prefix argument,
EXACT lines."
  (interactive (append (distdebug--region) (list current-prefix-arg)))
  (pcase-let ((`(,first . ,last) (distdebug--lines beg end)))
    (let ((r (distdebug-execute "distdebug.addLabel"
                                (list :uri (plist-get (eglot--TextDocumentIdentifier) :uri)
                                      :start_line first :end_line last
                                      :snap (if exact :json-false t)))))
      (message "distdebug: %s" (plist-get r :summary))
      r)))

(defun distdebug--code-action (beg end match)
  "Run the distdebug code action on BEG END whose lower-cased title contains MATCH.
With several, asks which."
  (let* ((server (distdebug--server))
         (actions (jsonrpc-request
                   server :textDocument/codeAction
                   (list :textDocument (eglot--TextDocumentIdentifier)
                         :range (list :start (eglot--pos-to-lsp-position beg)
                                      :end (eglot--pos-to-lsp-position end))
                         :context (list :diagnostics [] :only ["distdebug.label"]))))
         (fitting (cl-remove-if-not
                   (lambda (a) (string-match-p (regexp-quote match) (downcase (plist-get a :title))))
                   (append actions nil)))
         (chosen (cond ((null fitting)
                        (user-error "distdebug: no \"%s\" action here (offered: %s)" match
                                    (or (mapconcat (lambda (a) (plist-get a :title)) actions "; ") "none")))
                       ((null (cdr fitting)) (car fitting))
                       (t (let ((title (completing-read "distdebug: " (mapcar (lambda (a) (plist-get a :title)) fitting) nil t)))
                            (cl-find title fitting :key (lambda (a) (plist-get a :title)) :test #'equal)))))
         ;; A CodeAction literal carries its command; a bare Command is one.
         (command (or (plist-get chosen :command) chosen))
         (r (eglot-execute-command server (plist-get command :command) (plist-get command :arguments))))
    (setq distdebug-last-result r)
    (message "distdebug: %s" (or (plist-get r :summary) (plist-get chosen :title)))
    r))

(defun distdebug-unlabel (beg end)
  "Remove a label under the region BEG END (or the current line)."
  (interactive (distdebug--region))
  (distdebug--code-action beg end "remove label"))

(defun distdebug-accept-prediction (beg end)
  "Label a predicted block under BEG END (or the current line) as causal."
  (interactive (distdebug--region))
  (distdebug--code-action beg end "accept predicted block"))

(defun distdebug-undo-label ()
  "Take back this server's last label change."
  (interactive)
  (message "distdebug: %s" (plist-get (distdebug-execute "distdebug.undoLabel") :summary)))

(defun distdebug-show-attempt (ref)
  "Make attempt REF (\"config#k\") current."
  (interactive "sdistdebug: attempt (config#k): ")
  (unless (string-match "\\`\\([^#]+\\)#\\([0-9]+\\)\\'" ref)
    (user-error "distdebug: %S is not config#k" ref))
  (distdebug-execute "distdebug.showAttempt"
                     (list :config (match-string 1 ref) :attempt (string-to-number (match-string 2 ref)))))

(defun distdebug-clear-attempt ()
  "Clear the current attempt: its predictions go, labels stay."
  (interactive)
  (distdebug-execute "distdebug.clearAttempt"))

(defun distdebug-status ()
  "The server's `distdebug/status': the incident and its attempts."
  (interactive)
  (let ((s (jsonrpc-request (distdebug--server) :distdebug/status nil)))
    (when (called-interactively-p 'any)
      (with-current-buffer (get-buffer-create "*distdebug-status*")
        (let ((inhibit-read-only t))
          (erase-buffer)
          (insert (format "incident: %s\n\n" (or (plist-get (plist-get s :incident) :id) "none")))
          (dolist (a (append (plist-get s :attempts) nil))
            (insert (format "%s %s  %s, %s blocks%s\n" (if (eq (plist-get a :current) t) "*" " ")
                            (distdebug-attempt-name a) (plist-get a :state) (plist-get a :blocks)
                            (if (eq (plist-get a :scored) t) ", scored" "")))))
        (special-mode)
        (display-buffer (current-buffer))))
    s))

(defun distdebug-show-report ()
  "Open the workspace's bug report, .distdebug/report.md."
  (interactive)
  (let ((root (or (distdebug-workspace-root) (user-error "distdebug: not in an incident workspace"))))
    (find-file (expand-file-name ".distdebug/report.md" root))))

;;;; Colours per diagnostic code

(defun distdebug--code-of (diag)
  "The code of the LSP diagnostic DIAG as a string."
  (let ((code (plist-get diag :code)))
    (if (numberp code) (number-to-string code) code)))

(defun distdebug--line-region (line-beg line-end)
  "Buffer positions from the start of 0-based LINE-BEG to the end of LINE-END."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char (point-min))
      (forward-line line-beg)
      (let ((beg (point)))
        (forward-line (- line-end line-beg))
        (cons beg (line-end-position))))))

(defun distdebug--decorate (diagnostics)
  "Colour this buffer's lines after the server's DIAGNOSTICS (a vector of plists)."
  (save-restriction
    (widen)
    (dolist (o (overlays-in (point-min) (point-max)))
      (when (overlay-get o 'distdebug-kind) (delete-overlay o))))
  (cl-loop
   for d across diagnostics
   for kind = (assoc (distdebug--code-of d) distdebug-kinds)
   when (and kind (equal (plist-get d :source) "distdebug"))
   do (let* ((range (plist-get d :range))
             (start (plist-get (plist-get range :start) :line))
             (end-pos (plist-get range :end))
             ;; A range ending at column 0 stops on the line before.
             (end (if (and (> (plist-get end-pos :line) start) (zerop (plist-get end-pos :character)))
                      (1- (plist-get end-pos :line))
                    (plist-get end-pos :line)))
             (region (distdebug--line-region start end))
             (ov (make-overlay (car region) (cdr region) nil t nil)))
        (overlay-put ov 'distdebug-kind (car kind))
        (overlay-put ov 'face (nth 1 kind))
        (overlay-put ov 'priority (nth 3 kind))
        (when distdebug-tags
          (overlay-put ov 'after-string
                       (propertize (concat "  " (nth 2 kind)) 'face (list (nth 1 kind) 'shadow)))))))

(cl-defmethod eglot-handle-notification :after
  ((_server distdebug-server) (_method (eql textDocument/publishDiagnostics)) &key uri diagnostics
   &allow-other-keys)
  (when-let ((buffer (find-buffer-visiting (eglot--uri-to-path uri))))
    (with-current-buffer buffer
      (distdebug--decorate diagnostics))))

(defun distdebug-kinds-at (&optional pos)
  "The diagnostic codes coloured at POS (default: point)."
  (delete-dups (delq nil (mapcar (lambda (o) (overlay-get o 'distdebug-kind))
                                 (overlays-at (or pos (point)))))))

;;;; Replaying an attempt

(defvar distdebug-replay-state nil
  "The replay under way: a plist (:config :attempt :position), position 1-based.")

(defun distdebug--replay-mark (root read-so-far)
  "Mark with `distdebug-read' the READ-SO-FAR lines of visited files under ROOT."
  (dolist (b (buffer-list))
    (with-current-buffer b
      (remove-overlays (point-min) (point-max) 'distdebug-read t)))
  (dolist (f (append read-so-far nil))
    (when-let ((buf (find-buffer-visiting (expand-file-name (plist-get f :path) root))))
      (with-current-buffer buf
        (dolist (r (append (plist-get f :ranges) nil))
          (let* ((first (aref r 0)) (last (aref r 1))
                 (beg (save-excursion (goto-char (point-min)) (forward-line (1- first)) (point)))
                 (end (if last
                          (save-excursion (goto-char (point-min)) (forward-line (1- last)) (line-end-position))
                        (point-max)))
                 (ov (make-overlay beg end)))
            (overlay-put ov 'distdebug-read t)
            (overlay-put ov 'face 'distdebug-read)
            (overlay-put ov 'priority 5)))))))

(defun distdebug-replay-describe (step position total)
  "One line about STEP at POSITION of TOTAL."
  (let* ((args (plist-get step :args))
         (what (or (plist-get step :text) (and args (or (plist-get args :command) (format "%S" args))) ""))
         (what (replace-regexp-in-string "[ \t\n]+" " " what)))
    (format "step %d/%d · %s%s: %s%s" position total (plist-get step :kind)
            (if (plist-get step :tool) (concat " " (plist-get step :tool)) "")
            (truncate-string-to-width what 160 nil nil "...")
            (if (eq (plist-get step :reads_label) t) " (reads a labeled line)" ""))))

(defun distdebug-replay (how)
  "Step through the current attempt.
HOW is `next', `prev' or `first' (the first step that read a labeled
line).  Opens the file region the step read, marks every line read so
far, shows the step and returns it."
  (let* ((server (distdebug--server))
         (root (project-root (eglot--project server)))
         (answer (jsonrpc-request server :distdebug/replay nil))
         (steps (plist-get answer :steps))
         (same (and distdebug-replay-state
                    (equal (plist-get distdebug-replay-state :config) (plist-get answer :config))
                    (equal (plist-get distdebug-replay-state :attempt) (plist-get answer :attempt))))
         (at (if same (plist-get distdebug-replay-state :position) 0))
         (position (pcase how
                     ('first (let ((first (plist-get answer :first_label_read)))
                               (unless first
                                 (user-error "distdebug: %s" (if (eq (plist-get answer :labels) t)
                                                                 "no step read a labeled line"
                                                               "the labels are not known (the :incident setting)")))
                               (1+ first)))
                     ('prev (max 1 (1- at)))
                     (_ (min (length steps) (1+ at))))))
    (when (zerop (length steps)) (user-error "distdebug: the attempt has no step yet"))
    (setq distdebug-replay-state (list :config (plist-get answer :config) :attempt (plist-get answer :attempt)
                                       :position position))
    (let* ((step (aref steps (1- position)))
           (read (car (append (plist-get step :paths_read) nil))))
      (when read
        (find-file (expand-file-name (plist-get read :path) root))
        (goto-char (point-min))
        (forward-line (1- (or (plist-get read :start_line) 1))))
      (distdebug--replay-mark root (plist-get step :read_so_far))
      (message "distdebug: %s" (distdebug-replay-describe step position (length steps)))
      step)))

(defun distdebug-replay-next () "Replay the next step." (interactive) (distdebug-replay 'next))
(defun distdebug-replay-prev () "Replay the previous step." (interactive) (distdebug-replay 'prev))
(defun distdebug-replay-first-label-read ()
  "Jump to the first step that read a labeled line."
  (interactive)
  (distdebug-replay 'first))

(defun distdebug-replay-stop ()
  "End the replay: the marks go."
  (interactive)
  (setq distdebug-replay-state nil)
  (dolist (b (buffer-list))
    (with-current-buffer b (remove-overlays (point-min) (point-max) 'distdebug-read t))))

;;;; Live steps

(defvar distdebug-last-step nil
  "The last `distdebug/trajectoryStep' the server sent (a plist).")

(cl-defmethod eglot-handle-notification
  ((_server distdebug-server) (_method (eql distdebug/trajectoryStep)) &rest params)
  (setq distdebug-last-step params))

(provide 'distdebug)
;;; distdebug.el ends here
