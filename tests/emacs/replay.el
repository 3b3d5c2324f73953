;;; replay.el --- replaying an attempt in a real Emacs with eglot  -*- lexical-binding: t; -*-

;; Run by tests/e2e-emacs.sh: emacs --batch -q -l tests/emacs/replay.el REPO DISTDEBUG_BIN
;; An imported harness's attempt on the tiny-lease fixture (its trajectory.json written here) is
;; made current; `distdebug-replay-next', `-prev' and `-first-label-read' step through it, open
;; the region each step read, mark the lines read so far (`distdebug-read' overlays) and jump to
;; the first step that read a labeled line (lease.py 13-18, read at step 4, lines 10-20).

;;; Code:

(load (expand-file-name "helpers.el" (file-name-directory load-file-name)) nil t)

(defun dd-marked (buf)
  "The lines of BUF marked as read."
  (with-current-buffer buf
    (let (lines)
      (dolist (o (overlays-in (point-min) (point-max)))
        (when (overlay-get o 'distdebug-read)
          (let ((a (line-number-at-pos (overlay-start o) t)) (b (line-number-at-pos (overlay-end o) t)))
            (dotimes (i (1+ (- b a))) (push (+ a i) lines)))))
      (sort (delete-dups lines) #'<))))

(defun dd-range (a b) (number-sequence a b))

(dd-step "an imported attempt with reads is made current"
  (make-directory (file-name-directory dd-incident) t)
  (copy-directory (expand-file-name "tests/fixtures/incidents/tiny-lease" dd-repo) dd-incident)
  (dd-run "prepare" dd-incident "--out" dd-ws)
  (let ((dir (expand-file-name "mini/tiny-lease/attempt-1" dd-results)))
    (make-directory dir t)
    (with-temp-file (expand-file-name "trajectory.json" dir)
      (insert (json-encode
               `((incident . "tiny-lease") (attempt . 1) (agent . "mini-swe-agent") (exit . "submitted")
                 (steps . [((index . 0) (kind . "thought") (text . "the log says the lease lasted hours"))
                           ((index . 1) (kind . "action") (tool . "bash") (args . ((command . "sed -n 1,12p src/lease.py")))
                            (paths_read . [((path . "src/lease.py") (start_line . 1) (end_line . 12))]))
                           ((index . 2) (kind . "observation") (text . "class LeaseTable: ..."))
                           ((index . 3) (kind . "action") (tool . "bash") (args . ((command . "cat src/server.py")))
                            (paths_read . [((path . "src/server.py"))]))
                           ((index . 4) (kind . "action") (tool . "bash") (args . ((command . "sed -n 10,20p src/lease.py")))
                            (paths_read . [((path . "src/lease.py") (start_line . 10) (end_line . 20))]))
                           ((index . 5) (kind . "submit") (text . "done"))])))))
    (with-temp-file (expand-file-name "diagnosis.json" dir) (insert "{\"blocks\": []}")))
  (setq distdebug-program dd-bin
        distdebug-settings (list :incident dd-incident :results dd-results))
  (distdebug-setup)
  (dd-visit "src/server.py")
  (distdebug-connect)
  (dd-wait "the distdebug server" (lambda () (eglot-current-server)))
  (distdebug-show-attempt "mini#1"))

(dd-step "next: the thought (no file), then the first read opens lease.py at line 1 and marks 1-12"
  (let ((step (distdebug-replay-next)))
    (unless (equal (plist-get step :kind) "thought") (dd-fail "first step %S" step))
    (unless (string-prefix-p "distdebug: step 1/6 · thought: the log says" (car dd-messages))
      (dd-fail "shown: %S" (car dd-messages))))
  (distdebug-replay-next)
  (unless (string-suffix-p "/src/lease.py" buffer-file-name) (dd-fail "opened %s" buffer-file-name))
  (unless (= (line-number-at-pos) 1) (dd-fail "point on line %d" (line-number-at-pos)))
  (unless (equal (dd-marked (current-buffer)) (dd-range 1 12)) (dd-fail "marked %S" (dd-marked (current-buffer))))
  (unless (string-match-p "action bash: sed -n 1,12p src/lease.py" (car dd-messages)) (dd-fail "shown: %S" (car dd-messages))))

(dd-step "first-label-read: the first step that read a labeled line, with everything read by then"
  (let ((step (distdebug-replay-first-label-read)))
    (unless (and (= (plist-get step :index) 4) (eq (plist-get step :reads_label) t)) (dd-fail "step %S" step)))
  (unless (string-suffix-p "/src/lease.py" buffer-file-name) (dd-fail "opened %s" buffer-file-name))
  (unless (= (line-number-at-pos) 10) (dd-fail "point on line %d" (line-number-at-pos)))
  (unless (equal (dd-marked (current-buffer)) (dd-range 1 20)) (dd-fail "marked %S" (dd-marked (current-buffer))))
  (let ((server (find-buffer-visiting (expand-file-name "src/server.py" dd-ws))))
    (unless (equal (dd-marked server) (dd-range 1 (with-current-buffer server (line-number-at-pos (point-max) t))))
      (dd-fail "server.py marked %S" (dd-marked server))))
  (unless (string-match-p "(reads a labeled line)" (car dd-messages)) (dd-fail "shown: %S" (car dd-messages))))

(dd-step "prev: back to the step that read server.py; lease.py keeps only lines 1-12; stop clears"
  (let ((step (distdebug-replay-prev)))
    (unless (= (plist-get step :index) 3) (dd-fail "step %S" step)))
  (unless (string-suffix-p "/src/server.py" buffer-file-name) (dd-fail "opened %s" buffer-file-name))
  (let ((lease (find-buffer-visiting (expand-file-name "src/lease.py" dd-ws))))
    (unless (equal (dd-marked lease) (dd-range 1 12)) (dd-fail "lease.py marked %S" (dd-marked lease)))
    (distdebug-replay-stop)
    (when (dd-marked lease) (dd-fail "stop left marks %S" (dd-marked lease)))))

(dd-finish 0)
;;; replay.el ends here
