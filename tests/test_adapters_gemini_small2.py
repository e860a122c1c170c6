"""Gemini CLI's own files in a ``.gemini`` folder (round 32, SMALL2): no runs, passed over by their place, as Qwen
Code's in ``.qwen``. The real ones (``gemini-cli/.small2/``) are what the released 0.61.0 left in ``~/.gemini``; their
origin is in its ``README.md``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from trajsearch.ingest.detect import SideFile
from trajsearch.ingest.read import detect_format, read_inputs

FIXTURES = Path(__file__).parent / "fixtures" / "gemini-cli"
#: Files the CLI writes there besides the real ones, shaped as its source writes them.
WRITTEN = {
    "google_accounts.json": {"active": "u@example.com", "old": []},
    "oauth_creds.json": {"access_token": "x", "refresh_token": "y", "scope": "openid", "token_type": "Bearer",
                         "id_token": "z", "expiry_date": 1772356000000},
    "trustedFolders.json": {"/home/u/proj": "TRUST_FOLDER"},
    "mcp-oauth-tokens.json": [{"serverName": "docs", "token": {"accessToken": "a", "tokenType": "Bearer"},
                               "updatedAt": 1772356000000}],
    "trusted_hooks.json": {"/home/u/proj": ["lint:npm run lint"]},
    "extension_integrity.json": {"shapes": "9f2c"},
    "mcp-server-enablement.json": {"docs": {"enabled": False}},
    "acknowledgments/agents.json": {"/home/u/proj": {"reviewer": "4be1"}},
    "extensions/extension-enablement.json": {"shapes": {"overrides": ["/home/u/*"]}},
    "extensions/shapes/gemini-extension.json": {"name": "shapes", "version": "1.0.0", "contextFileName": "GEMINI.md"},
    # an extension's folder is copied whole at install (review SMALL2, 1): its package.json, its built code's config
    "extensions/shapes/package.json": {"name": "shapes-extension", "version": "1.0.0", "type": "module"},
    "extensions/shapes/dist/tsconfig.json": {"compilerOptions": {"outDir": "dist"}},
    "tmp/proj/compression_state.json": {"app.py": {"level": "FULL"}},
}


def test_the_clis_own_files_in_a_gemini_folder_are_no_runs(tmp_path: Path) -> None:
    """Bug: ``trajsearch ingest ~/.gemini`` rejected every file the CLI keeps there beside its sessions
    (``projects.json``, ``settings.json``, ``state.json``, its credentials, ...) as an unrecognised dump, so a walk of
    a real install failed where its one session read clean. Passed over by their place; the same name elsewhere is
    no Gemini CLI file."""
    gemini = tmp_path / ".gemini"
    shutil.copytree(FIXTURES / ".small2" / "dot-gemini", gemini)
    for name, content in WRITTEN.items():
        (gemini / name).parent.mkdir(parents=True, exist_ok=True)
        (gemini / name).write_text(json.dumps(content))
    chats = gemini / "tmp" / "proj" / "chats"
    chats.mkdir(parents=True)
    shutil.copy(FIXTURES / ".aud32" / "session-2026-12-07T10-49-c718ec95.jsonl", chats)
    runs = list(read_inputs([gemini], tenant="acme"))
    assert [r.trajectory.task for r in runs if r.ok] == ["fix add in app.py"]
    assert [r.error for r in runs if not r.ok] == []
    for name in [*WRITTEN, "projects.json", "state.json", "settings.json", "installation_id"]:
        with pytest.raises(SideFile, match="Gemini CLI"):
            detect_format(gemini / name)
    elsewhere = tmp_path / "projects.json"
    shutil.copy(gemini / "projects.json", elsewhere)
    with pytest.raises(ValueError, match="unrecognised dump format"):
        detect_format(elsewhere)
