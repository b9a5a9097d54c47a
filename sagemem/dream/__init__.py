"""Consolidation: tidying a memory folder over months without losing a fact (uses
``audit``, ``history``, ``writes``, ``store`` and below).

- ``plan``: the plan format (``Plan``, ``Operation``) any planner writes; ``planners``:
  ``make_plan`` — tidy, llm or a plan file, chosen in one place.
- The planners: ``findings`` (what a planner knows of a folder, read once), ``tidy``
  (the deterministic planner), ``dates`` (relative dates in English and Chinese made
  absolute) with ``verbatim`` (code, URLs and frontmatter, where a date is left alone),
  ``brief`` (what ``dream plan`` prints for an agent), ``llm`` and ``llm_client`` (the
  optional planner over an OpenAI-compatible endpoint).
- The run: ``forecast`` (what a plan would do, the loss ceiling judged before any
  write), ``apply`` (one operation as a guarded write, or its refusal), ``lines`` (facts
  as lines: what a run leaves absent from every active memory), ``run`` (``dream_run``:
  report, or rollback point, writes and manifest), ``manifest`` (its JSON and Markdown),
  ``runs`` (``<state>/dream/<run id>/``, the run lock).
- After: ``undo`` (``undo_run``: back to the rollback point), ``recover``
  (``finish_interrupted``: the manifest of a run a kill cut short), ``auto``
  (``dream_auto``: the gated run for cron or a session hook).
"""
