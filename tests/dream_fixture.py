"""A memory folder that needs every kind of tidying ``dream`` knows, as of ``TODAY``.

``make_dream_folder(tmp_path)`` writes it under ``tmp_path/memory`` (the state directory
is the caller's: ``MemoryStore(folder, tmp_path / "state")``). What it holds, by kind:

- duplicate: ``project_deploy_checklist.md`` / ``project_deploy_steps.md`` (the same
  steps worded a little otherwise; ``steps`` updated later, and each has a line the
  other lacks), ``reference_office_wifi.md`` / ``reference_office_wifi_copy.md`` (byte
  for byte the same);
- dates: ``feedback_standup_format.md`` ("yesterday", "last week", "next Monday",
  updated 2026-03-15), ``user_team_lunch.md`` (昨天, 上周, 下个月, updated 2026-06-10),
  and ``user_gym_schedule.md`` ("yesterday" but no ``updated``: no anchor, never
  rewritten);
- expired: ``project_autumn_promo.md`` (``invalid_at`` 200 days before TODAY);
- idle: ``project_legacy_build.md`` (a project memory updated 215 days ago, the
  threshold is 90, the ledger is empty);
- a still-valid future date: ``project_vendor_contract.md`` ("Contract expires
  2027-10-03, no auto-renewal." among other lines); it is also missing from MEMORY.md;
- links and index: MEMORY.md points at ``project_retired_runbook.md``, which does not
  exist (a dangling line ``audit --fix`` drops); ``reference_release_links.md`` has CRLF
  line endings (``audit --fix`` makes them LF) and a ``[[wikilink]]`` to a missing memory
  (a broken link the audit reports and nothing repairs).

Every memory has at least four body lines; every file's mtime is TODAY at noon UTC, so
the idle rule never falls back to the clock of the machine running the tests.
"""

from __future__ import annotations

import os
from datetime import date, datetime, timezone
from pathlib import Path

TODAY = date(2026, 12, 2)

DEPLOY_CHECKLIST = """---
name: Deploy checklist
description: The steps to deploy the web app to production
metadata:
  type: project
updated: 2026-11-20
tags: [deploy]
---
Run the full test suite on the release branch before tagging.
Tag the release as vX.Y.Z and push the tag to origin.
Deploy to staging first and watch the error dashboard for ten minutes.
Promote the staging build to production with the deploy script.
Roll back with `deploy.sh --rollback` if the error rate doubles.
"""

DEPLOY_STEPS = """---
name: Deploy checklist
description: The steps to deploy the web app to production
metadata:
  type: project
updated: 2026-11-28
tags: [deploy, release]
aliases: [release steps]
---
Run the full test suite on the release branch before tagging.
Tag the release as vX.Y.Z and push the tag to origin.
Deploy to staging first and watch the error dashboard for 10 minutes.
Promote the staging build to production with the deploy script.
Post the release notes in #releases once production is green.
"""

OFFICE_WIFI = """---
name: Office wifi
description: How to join the office wireless network
metadata:
  type: reference
updated: 2026-10-01
---
The network is called acme-staff; guests use acme-guest.
The password is on the whiteboard in the kitchen, changed every quarter.
Laptops need the company certificate from the IT portal first.
Printers are only reachable from acme-staff.
"""

STANDUP_FORMAT = """---
name: Standup format
description: How the team wants standup updates written
metadata:
  type: feedback
updated: 2026-03-15
---
Keep each update to three bullets: done, doing, blocked.
The team agreed on this format yesterday after a long retro.
Last week the updates ran over fifteen minutes, which is why.
Try the shorter format from next Monday and review it in a month.
"""

TEAM_LUNCH = """---
name: 团队午餐
description: 团队聚餐的安排和口味偏好
metadata:
  type: user
updated: 2026-06-10
---
团队每月聚餐一次，由轮值的人订餐厅。
昨天大家投票决定以后不去火锅店了。
上周的聚餐改在了公司楼下的粤菜馆。
下个月轮到我订餐厅，记得提前一周预约。
"""

GYM_SCHEDULE = """---
name: Gym schedule
description: When I go to the gym and what I train
metadata:
  type: user
---
I go to the gym on Tuesdays and Thursdays before work.
I switched to the early class yesterday because the evening one was full.
Legs on Tuesday, upper body on Thursday.
Bring a lock; the lockers have none.
"""

AUTUMN_PROMO = """---
name: Autumn promo
description: The autumn discount campaign and its codes
metadata:
  type: project
updated: 2026-11-01
invalid_at: 2026-05-16
---
The autumn campaign gives 20% off annual plans.
The discount code is AUTUMN20, one use per account.
Marketing owns the landing page; support owns the FAQ.
Refunds under the promo follow the normal policy.
"""

LEGACY_BUILD = """---
name: Legacy build
description: How the old Makefile build of the desktop client works
metadata:
  type: project
updated: 2026-05-01
---
The desktop client still builds with the old Makefile under legacy/.
It needs GNU make 3.81 and the vendored zlib.
Run `make dist` to get the installer; it takes about twenty minutes.
Nobody has touched this since the Electron port started.
"""

VENDOR_CONTRACT = """---
name: Vendor contract
description: The hosting vendor's contract terms
metadata:
  type: project
updated: 2026-11-15
---
Our hosting vendor is Northwind Cloud, account manager Dana Li.
Contract expires 2027-10-03, no auto-renewal.
The price is fixed for the contract's term; bandwidth over 10 TB is billed apart.
Notice of non-renewal must be given in writing.
"""

RELEASE_LINKS = ("---\r\n"
                 "name: Release links\r\n"
                 "description: Where release artefacts and notes live\r\n"
                 "metadata:\r\n"
                 "  type: reference\r\n"
                 "updated: 2026-11-10\r\n"
                 "---\r\n"
                 "Installers are uploaded to the downloads bucket by CI.\r\n"
                 "Release notes are drafted in the wiki first.\r\n"
                 "The deploy steps are in [[project_deploy_checklist]].\r\n"
                 "The old signing notes were in [[reference_signing_keys]].\r\n")

MEMORIES = {
    "project_deploy_checklist.md": DEPLOY_CHECKLIST,
    "project_deploy_steps.md": DEPLOY_STEPS,
    "reference_office_wifi.md": OFFICE_WIFI,
    "reference_office_wifi_copy.md": OFFICE_WIFI,
    "feedback_standup_format.md": STANDUP_FORMAT,
    "user_team_lunch.md": TEAM_LUNCH,
    "user_gym_schedule.md": GYM_SCHEDULE,
    "project_autumn_promo.md": AUTUMN_PROMO,
    "project_legacy_build.md": LEGACY_BUILD,
    "project_vendor_contract.md": VENDOR_CONTRACT,
    "reference_release_links.md": RELEASE_LINKS,
}

INDEX = """# Memory index

- [Deploy checklist](project_deploy_checklist.md) — The steps to deploy the web app to production
- [Deploy checklist](project_deploy_steps.md) — The steps to deploy the web app to production
- [Office wifi](reference_office_wifi.md) — How to join the office wireless network
- [Office wifi](reference_office_wifi_copy.md) — How to join the office wireless network
- [Standup format](feedback_standup_format.md) — How the team wants standup updates written
- [团队午餐](user_team_lunch.md) — 团队聚餐的安排和口味偏好
- [Gym schedule](user_gym_schedule.md) — When I go to the gym and what I train
- [Autumn promo](project_autumn_promo.md) — The autumn discount campaign and its codes
- [Legacy build](project_legacy_build.md) — How the old Makefile build of the desktop client works
- [Retired runbook](project_retired_runbook.md) — The on-call runbook before the migration
- [Release links](reference_release_links.md) — Where release artefacts and notes live
"""


def make_dream_folder(root: Path) -> Path:
    """Write the folder under ``root/memory`` and return its path."""
    folder = root / "memory"
    folder.mkdir(parents=True)
    for name, text in {**MEMORIES, "MEMORY.md": INDEX}.items():
        (folder / name).write_bytes(text.encode("utf-8"))
    noon = datetime(TODAY.year, TODAY.month, TODAY.day, 12, tzinfo=timezone.utc).timestamp()
    for path in folder.iterdir():
        os.utime(path, (noon, noon))
    return folder
