;;; helpers.el --- shared by the Emacs end-to-end scripts  -*- lexical-binding: t; -*-

;; Loaded by each tests/emacs/*.el (tests/e2e-emacs.sh does not run it as a test): the repository
;; and binary from the command line, a temp folder with a workspace, incident copy and results
;; root, steps that stop the script at the first failure, and waits with deadlines.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'package)
(package-initialize)
(require 'eglot)
(require 'json)

(defvar dd-repo (expand-file-name (nth 0 command-line-args-left)))
(defvar dd-bin (expand-file-name (nth 1 command-line-args-left)))
(setq command-line-args-left nil)
(add-to-list 'load-path (expand-file-name "editors/emacs" dd-repo))
(require 'distdebug)

(defvar dd-tmp (make-temp-file "distdebug-emacs" t))
(defvar dd-ws (expand-file-name "ws" dd-tmp))
(defvar dd-incident (expand-file-name "incident/tiny-lease" dd-tmp))
(defvar dd-results (expand-file-name "results" dd-tmp))
(defvar dd-passed 0)
(defvar dd-messages nil "What the package said with `message', newest first.")

(advice-add 'message :around
            (lambda (orig fmt &rest args)
              (when fmt (push (apply #'format-message fmt args) dd-messages))
              (apply orig fmt args)))

(defun dd-finish (code)
  "Shut every eglot server down (no orphaned process) and exit with CODE."
  (dolist (servers (hash-table-values eglot--servers-by-project))
    (dolist (s servers) (ignore-errors (eglot-shutdown s))))
  (princ (format "%d passed%s\n" dd-passed (if (zerop code) "" ", 1 failed")))
  (kill-emacs code))

(defmacro dd-step (name &rest body)
  "Run BODY as the step NAME; the first failure ends the test."
  (declare (indent 1))
  `(condition-case err
       (progn ,@body
              (setq dd-passed (1+ dd-passed))
              (princ (format "ok - %s\n" ,name)))
     (error (princ (format "not ok - %s\n  %s\n" ,name (error-message-string err)))
            (dd-finish 1))))

(defun dd-fail (fmt &rest args)
  (error "%s" (apply #'format fmt args)))

(defun dd-wait (what cond &optional seconds)
  "Process server output until COND returns non-nil (its value), or fail naming WHAT."
  (let ((deadline (+ (float-time) (or seconds 20))) value)
    (while (and (not (setq value (funcall cond))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or value (dd-fail "timed out after %ss waiting for %s" (or seconds 20) what))))

(defun dd-run (&rest args)
  (with-temp-buffer
    (unless (zerop (apply #'call-process dd-bin nil t nil args))
      (dd-fail "distdebug %s failed: %s" (string-join args " ") (buffer-string)))))

(defun dd-read-json (file)
  (let ((json-object-type 'plist) (json-array-type 'list) (json-key-type 'keyword))
    (json-read-file file)))

(defun dd-visit (rel)
  (find-file (expand-file-name rel dd-ws))
  (current-buffer))

(defun dd-shown (code)
  "\"file:start-end\" of each flymake diagnostic with CODE in the visited workspace files."
  (let (out)
    (dolist (b (buffer-list))
      (with-current-buffer b
        (when (and buffer-file-name (string-prefix-p dd-ws buffer-file-name) (bound-and-true-p flymake-mode))
          (dolist (d (flymake-diagnostics (point-min) (point-max)))
            (when (string-match-p (format "\\[%s\\]" (regexp-quote code)) (flymake-diagnostic-text d))
              (let ((end (flymake-diagnostic-end d)))
                (push (format "%s:%d-%d" (file-relative-name buffer-file-name dd-ws)
                              (line-number-at-pos (flymake-diagnostic-beg d) t)
                              ;; A diagnostic ending at a line's start stops on the line before.
                              (- (line-number-at-pos end t)
                                 (if (and (> end (flymake-diagnostic-beg d))
                                          (save-excursion (goto-char end) (bolp)))
                                     1 0)))
                      out)))))))
    (sort out #'string<)))

(defun dd-blocks-text (blocks)
  (sort (mapcar (lambda (b) (format "%s:%d-%d" (plist-get b :path) (plist-get b :start_line) (plist-get b :end_line)))
                blocks)
        #'string<))

(defun dd-touches (a b)
  (and (equal (plist-get a :path) (plist-get b :path))
       (<= (plist-get a :start_line) (plist-get b :end_line))
       (<= (plist-get b :start_line) (plist-get a :end_line))))

(defun dd-labels () (plist-get (dd-read-json (expand-file-name "labels.json" dd-incident)) :blocks))

(defun dd-line-pos (line)
  (save-excursion (goto-char (point-min)) (forward-line (1- line)) (point)))

(provide 'helpers)
;;; helpers.el ends here
