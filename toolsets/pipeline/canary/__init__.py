"""Canary rollout of plugin tool versions.

A candidate version is `DIR/NAME.canary.py` declaring the same tool name as a served plugin. One job a module:

- routing.py: which version a call runs on (a stable hash of the `--canary-key`, so one key sees one version)
- policy.py: shares and ladders by risk, and the thresholds of the rules
- metrics.py: samples per tool version and their two windows (last 100 calls, last 30 minutes)
- rules.py: promote / hold / rollback from the windows; actions.py: the state transitions (auto and operator)
- scheduled.py: scheduled runs (`transport == "scheduled"`): to the candidate while the stage collects its runs,
  their samples apart from the windows; rules.py's `decide_scheduled` rolls back on one failure, else holds until
  the operator approves
- state.py: the shared state of one tool's rollout; store.py: kept in memory (+ files for the operator's
  command: the states in one JSON file, the samples in one file per version and step), or in Redis
  (toolsets/pipeline/canary/redis_store.py) so every replica routes and decides alike
- files.py: promotion to 100% (the candidate becomes the stable file, the old one goes under DIR/.history/)
  and hard rollback (the candidate file is disabled)
- middleware.py: `CanaryMiddleware(catalog)`, which picks the version of a call and pins it on the call
- router.py: `CanaryRouter.run` (runs the pinned version), samples, decisions (a fatal error, as the plugins'
  failures.py classes it, rolls back at once; any other error counts toward the error rate), audit events
"""
