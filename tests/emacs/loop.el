;;; loop.el --- the distdebug loop in a real Emacs with eglot  -*- lexical-binding: t; -*-

;; Run by tests/e2e-emacs.sh: emacs --batch -q -l tests/emacs/loop.el REPO DISTDEBUG_BIN
;; A prepared workspace of the tiny-lease fixture, opened through editors/emacs/distdebug.el
;; (started by its find-file hook and eglot-ensure): labels show as flymake diagnostics and
;; coloured lines, the offline agent runs, and its attempt is scored the moment it ends, three
;; times over, each time asserting that `hit' reaches flymake without any later message from
;; the server to push it through.  Then labeling a region, accepting a prediction, unlabeling,
;; the report and the score message.  Every wait has a deadline that fails the step.

;;; Code:
(load (expand-file-name "helpers.el" (file-name-directory load-file-name)) nil t)

(defvar dd-lease nil)
(defvar dd-diagnosis nil)

(dd-step "prepare a workspace; visiting a file starts distdebug through eglot-ensure; labels show"
  (make-directory (file-name-directory dd-incident) t)
  (copy-directory (expand-file-name "tests/fixtures/incidents/tiny-lease" dd-repo) dd-incident)
  (dd-run "prepare" dd-incident "--out" dd-ws)
  (setq distdebug-program dd-bin
        distdebug-settings (list :incident dd-incident :results dd-results :annotator "emacs-test"))
  (distdebug-setup)
  (setq dd-lease (dd-visit "src/lease.py"))
  (unless (eq major-mode 'python-mode) (dd-fail "lease.py is in %s" major-mode))
  ;; eglot-ensure connects from the command loop's post-command-hook, which batch Emacs never
  ;; runs by itself.
  (run-hooks 'post-command-hook)
  (let ((server (dd-wait "the distdebug server" (lambda () (with-current-buffer dd-lease (eglot-current-server))))))
    (unless (cl-typep server 'distdebug-server) (dd-fail "the buffer's server is %S" server))
    (unless (equal (file-name-as-directory (project-root (eglot--project server))) (file-name-as-directory dd-ws))
      (dd-fail "the server's project is %s, not the workspace" (project-root (eglot--project server)))))
  (let ((want (dd-blocks-text (dd-labels))))
    (dd-wait (format "label diagnostics %s" want) (lambda () (equal (dd-shown "label") want))))
  (with-current-buffer dd-lease
    (let ((first (plist-get (car (dd-labels)) :start_line)))
      (unless (member "label" (distdebug-kinds-at (dd-line-pos first)))
        (dd-fail "line %d is not coloured as a label: %S" first (distdebug-kinds-at (dd-line-pos first))))
      (let ((faces (delq nil (mapcar (lambda (o) (and (overlay-get o 'distdebug-kind) (overlay-get o 'face)))
                                     (overlays-at (dd-line-pos first))))))
        (unless (equal faces '(distdebug-label))
          (dd-fail "the distdebug faces on line %d are %S" first faces))))))

(dd-step "a file outside any workspace keeps eglot's own choice"
  (with-temp-buffer
    (setq buffer-file-name (expand-file-name "elsewhere/x.py" dd-tmp))
    (python-mode)
    (unless (null (distdebug-workspace-root)) (dd-fail "a workspace root outside the workspace"))
    (let ((contact (condition-case e (distdebug--contact nil) (error (list 'error (error-message-string e))))))
      (when (and (consp contact) (eq (car contact) 'distdebug-server))
        (dd-fail "distdebug would serve a file outside any workspace: %S" contact)))))

(defun dd-finished-attempt ()
  "The current attempt from distdebug/status once it is finished, else nil."
  (with-current-buffer dd-lease
    (cl-find-if (lambda (a) (and (eq (plist-get a :current) t)
                                 (not (member (plist-get a :state) '("queued" "running")))))
                (append (plist-get (distdebug-status) :attempts) nil))))

(dd-step "distdebug-run baseline 1: predictions on exactly the lines of its diagnosis.json"
  (with-current-buffer dd-lease (distdebug-run "baseline" 1))
  (let ((a (dd-wait "the attempt to finish" #'dd-finished-attempt 60)))
    (unless (equal (plist-get a :exit) "submitted") (dd-fail "exit %S" (plist-get a :exit))))
  (setq dd-diagnosis (dd-read-json (expand-file-name "baseline/tiny-lease/attempt-1/diagnosis.json" dd-results)))
  (let ((want (dd-blocks-text (cl-remove-if-not (lambda (b) (member (plist-get b :path) '("src/lease.py")))
                                                (plist-get dd-diagnosis :blocks)))))
    (when (null want) (dd-fail "the offline agent predicted nothing in lease.py; the loop needs a hit"))
    (dd-wait (format "predicted diagnostics %s" want) (lambda () (equal (dd-shown "predicted") want)))))

(dd-step "scored the moment the attempt is shown: hit reaches flymake each time (3 rounds)"
  (let* ((blocks (plist-get dd-diagnosis :blocks))
         (labels (dd-labels))
         (hits (dd-blocks-text (cl-remove-if-not (lambda (b) (and (equal (plist-get b :path) "src/lease.py")
                                                                  (cl-some (lambda (l) (dd-touches b l)) labels)))
                                                 blocks))))
    (when (null hits) (dd-fail "no block of the offline agent touches a label: %S" blocks))
    (dotimes (round 3)
      (with-current-buffer dd-lease
        (unless (zerop round)
          ;; Shown again from disk: unscored, its blocks predicted.
          (distdebug-show-attempt "baseline#1")
          (dd-wait "the attempt shown again, unscored" (lambda () (and (dd-shown "predicted") (null (dd-shown "hit"))))))
        (let ((scores (distdebug-score)))
          (unless (= (length scores) 1) (dd-fail "score answered %S" scores))))
      ;; No request from here on: only what the server already sent may bring the hit.
      (let ((deadline (+ (float-time) 5)))
        (while (and (not (equal (dd-shown "hit") hits)) (< (float-time) deadline))
          (accept-process-output nil 0.05)))
      (unless (equal (dd-shown "hit") hits)
        (dd-fail "round %d: flymake shows hit %S, predicted %S; expected hit %S" (1+ round)
                 (dd-shown "hit") (dd-shown "predicted") hits)))
    (with-current-buffer dd-lease
      (let ((line (plist-get (cl-find "src/lease.py" blocks :key (lambda (b) (plist-get b :path)) :test #'equal) :start_line)))
        (unless (member "hit" (distdebug-kinds-at (dd-line-pos line)))
          (dd-fail "line %d is not coloured as a hit: %S" line (distdebug-kinds-at (dd-line-pos line))))))))

(dd-step "the score message names the attempt"
  (let ((msg (cl-find-if (lambda (m) (string-prefix-p "distdebug: baseline #1: block coverage " m)) dd-messages)))
    (unless msg (dd-fail "no score message naming baseline #1 among %S" (seq-take dd-messages 5)))))

(dd-step "distdebug-label-region labels lines 20-24 (snapped): labels.json changes, a label shows"
  (let ((before (length (dd-labels))))
    (with-current-buffer dd-lease
      (distdebug-label-region (dd-line-pos 21) (dd-line-pos 23)))
    (let* ((after (dd-labels))
           (added (cl-find "emacs-test" after :key (lambda (b) (plist-get b :annotator)) :test #'equal)))
      (unless (= (length after) (1+ before)) (dd-fail "labels.json has %d blocks, expected %d" (length after) (1+ before)))
      (unless (and added (<= (plist-get added :start_line) 21) (>= (plist-get added :end_line) 23))
        (dd-fail "the new label is %S" added))
      (dd-wait "a label diagnostic on the new block"
               (lambda () (member (format "src/lease.py:%d-%d" (plist-get added :start_line) (plist-get added :end_line))
                                  (dd-shown "label")))))))

(dd-step "distdebug-unlabel removes the label under the cursor"
  (with-current-buffer dd-lease
    (goto-char (dd-line-pos 22))
    (distdebug-unlabel (point) (point)))
  (when (cl-find "emacs-test" (dd-labels) :key (lambda (b) (plist-get b :annotator)) :test #'equal)
    (dd-fail "the label is still in labels.json: %S" (dd-labels)))
  (dd-wait "the label diagnostic gone" (lambda () (not (cl-some (lambda (x) (string-match-p ":2[0-4]-" x)) (dd-shown "label"))))))

(dd-step "distdebug-accept-prediction labels the predicted block in src/server.py"
  (let* ((block (cl-find "src/server.py" (plist-get dd-diagnosis :blocks) :key (lambda (b) (plist-get b :path)) :test #'equal))
         (buf (dd-visit "src/server.py")))
    (unless block (dd-fail "the offline agent predicted nothing in server.py: %S" (plist-get dd-diagnosis :blocks)))
    (with-current-buffer buf
      (distdebug-accept-prediction (dd-line-pos (plist-get block :start_line)) (dd-line-pos (plist-get block :start_line))))
    (let ((accepted (cl-find "src/server.py" (dd-labels) :key (lambda (b) (plist-get b :path)) :test #'equal)))
      (unless (and accepted (= (plist-get accepted :start_line) (plist-get block :start_line))
                   (= (plist-get accepted :end_line) (plist-get block :end_line)))
        (dd-fail "labels.json after accepting: %S" (dd-labels)))
      (unless (plist-get accepted :accepted_from) (dd-fail "no accepted_from in %S" accepted)))
    (with-current-buffer buf (distdebug-undo-label))
    (when (cl-find "src/server.py" (dd-labels) :key (lambda (b) (plist-get b :path)) :test #'equal)
      (dd-fail "undo left the accepted label: %S" (dd-labels)))))

(dd-step "distdebug-show-report opens the bug report; it is not served"
  (set-buffer dd-lease)
  (distdebug-show-report)
  (unless (string-suffix-p "/.distdebug/report.md" buffer-file-name) (dd-fail "opened %s" buffer-file-name))
  (when (distdebug--served-p) (dd-fail "the report would be served by distdebug")))

(provide 'loop)
(dd-finish 0)
;;; loop.el ends here
