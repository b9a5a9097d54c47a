"""A server answers for the caller's project, not its own: the past sessions a served
hook quotes are those of the project the hook runs in (its working directory), as in
process, never those of the directory the server was started from."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from serve_fixture import MARK_LOCAL, MARK_SERVED, PROBE, short_dir
from test_transcripts_surfaces import ANSWER, FIXTURES, QUEUE_QUESTION

from sagemem.files.gitroot import claude_project_key

__all__ = ["short_dir"]  # the fixture, used by name


class Twin:
    """The folders the server was started for, seen from one project's directory."""

    def __init__(self, root: Path) -> None:
        self.memory, self.state = root / "memory", root / "state"
        self.env = {**os.environ, "HOME": str(root / "home"), "SAGE_MEM_GLOBAL_DIR": "off",
                    "SAGE_MEM_SEMANTIC": "off", "SAGE_MEM_TRANSCRIPTS": "on",
                    "SAGE_MEM_CLAUDE_HOME": str(root / "claude")}
        self.env.pop("CLAUDE_PROJECT_DIR", None)

    def args(self) -> list[str]:
        return ["--dir", str(self.memory), "--state-dir", str(self.state)]

    def hook(self, project: Path) -> tuple[str, bool]:
        """The hook's additionalContext run in ``project``, and whether it was served."""
        payload = {"session_id": f"live-{project.name}", "hook_event_name": "UserPromptSubmit",
                   "cwd": str(project), "prompt": QUEUE_QUESTION}
        done = subprocess.run([sys.executable, "-c", PROBE, *self.args(), "hook",
                               "claude-code"], input=json.dumps(payload).encode(),
                              cwd=project, env=self.env, capture_output=True, timeout=60)
        err = done.stderr.decode()
        assert done.returncode == 0 and err.endswith((MARK_SERVED, MARK_LOCAL)), err
        out = done.stdout.decode()
        context = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""
        return context, err.endswith(MARK_SERVED)


def test_a_served_hook_quotes_the_callers_past_sessions_not_the_servers(
        short_dir: Path) -> None:
    shop, other = short_dir / "a" / "shop", short_dir / "b" / "other"
    for folder in (shop, other, short_dir / "memory", short_dir / "home"):
        folder.mkdir(parents=True)
    shutil.copytree(FIXTURES, short_dir / "claude" / "projects" / claude_project_key(shop))
    twin = Twin(short_dir)
    server = subprocess.Popen([sys.executable, "-m", "sagemem", *twin.args(), "serve",
                               "--idle", "0"], cwd=shop, env=twin.env,
                              stderr=subprocess.PIPE, text=True)
    try:
        assert server.stderr is not None and "ready" in server.stderr.readline()
        from_other, served = twin.hook(other)
        assert served and ANSWER not in from_other  # the server's own project is not quoted
        from_shop, served = twin.hook(shop)
        assert served and ANSWER in from_shop  # the caller's is
    finally:
        server.terminate()
        server.wait(30)
        if server.stderr is not None:
            server.stderr.close()
