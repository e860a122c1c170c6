"""Audit 32 of the OpenHands readers: the V1 app server's own store of a conversation's events.

Real files only: the SDK conversation ``openhands/.real/sdk/0a1b2c3d00004000800000000000f019/`` (openhands-sdk 1.58.2's
own serialization, see that folder's SOURCE.md), its events laid out as OpenHands' app server stores them. Plumbing:
read_dump, no store.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump

SDK_RUN = Path(__file__).parent / "fixtures" / "openhands" / ".real" / "sdk" / "0a1b2c3d00004000800000000000f019"


def _app_server_store(home: Path, conversation: Path = SDK_RUN) -> Path:
    """The run's events as the app server keeps them (OpenHands/OpenHands ``openhands/app_server/event/
    event_service_base.py`` ``save_event`` + ``filesystem_event_service.py`` ``_store_event``, read at
    1eec5880a1b0f8310c650ca45e9cc6938efcaa96): ``<persistence dir>/v1_conversations/<conversation id hex>/<event id
    hex>.json``, each ``model_dump_json(indent=2)``, no index in the name, no ``base_state.json`` (``conversation``: the
    SDK folder whose events they are)."""
    folder = home / "v1_conversations" / conversation.name
    folder.mkdir(parents=True)
    for path in sorted((conversation / "events").glob("event-*.json")):
        event = json.loads(path.read_text(encoding="utf-8"))
        (folder / f"{event['id'].replace('-', '')}.json").write_text(json.dumps(event, indent=2), encoding="utf-8")
    return folder


def test_openhands_app_server_event_store_is_one_run_in_time_order(tmp_path: Path) -> None:
    """Bug: a conversation the V1 app server stored (``~/.openhands/v1_conversations/<id hex>/<event id hex>.json``)
    was refused event by event, each told to "ingest the conversation folder" that had just been ingested. It is
    the run the SDK folder is, its events in time order (their names, random ids, are not)."""
    folder = _app_server_store(tmp_path / ".openhands")
    [sdk] = read_dump(SDK_RUN, tenant="acme")
    names = [json.loads(p.read_text())["id"] for p in sorted(folder.iterdir())]
    assert names != sorted(names, key=lambda i: json.loads((folder / f"{i.replace('-', '')}.json").read_text())
                           ["timestamp"])  # the names' order is not the run's
    for given in (folder, tmp_path / ".openhands"):  # the folder, or a walk of the persistence dir
        [result] = read_dump(given, tenant="acme")
        assert result.ok, result.error
        run, want = result.trajectory, sdk.trajectory
        assert run.trajectory_id == want.trajectory_id == "openhands.0a1b2c3d00004000800000000000f019"
        assert run.task == want.task
        assert [(s.action, s.arguments, s.error) for s in run.steps] == [
            (s.action, s.arguments, s.error) for s in want.steps]
        assert run.tools_available == want.tools_available
    [alone] = read_dump(next(folder.iterdir()), tenant="acme")  # one of its files named alone
    assert not alone.ok and alone.error.endswith(f"which keeps one event per file in {folder}: ingest the "
                                                 f"conversation folder {folder}")


def test_openhands_app_server_store_with_its_first_file_cut_short_is_still_read(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Bug (review of round 32): the store's folder was told by its first file by name alone, a random event id; that
    one file cut short (a killed server), the folder was not claimed and each other file was refused with a pointer
    to the folder. The folder is the run, read without that file and saying so."""
    folder = _app_server_store(tmp_path / ".openhands")
    first = sorted(folder.iterdir())[0]
    first.write_text(first.read_text(encoding="utf-8")[:50], encoding="utf-8")
    for given in (folder, tmp_path / ".openhands"):
        [result] = read_dump(given, tenant="acme")
        assert result.ok, result.error
        assert result.trajectory.trajectory_id == "openhands.0a1b2c3d00004000800000000000f019"
    assert caplog.text.count(f"run read without {first.name}: ") == 2


def test_openhands_app_servers_older_store_is_one_run_in_time_order(tmp_path: Path) -> None:
    """Bug (review of round 32): the app server's older store (OpenHands/OpenHands ``openhands/app_server/event/
    filesystem_event_service.py`` at d6fab190bfb55f07cc380993b45ec4f781706a92, November 2025:
    ``<persistence dir>/v1/events/<conversation uuid>/<YYYYMMDDHHMMSS>_<kind>_<event id hex>``, no suffix) was passed
    over by name, the folder and a walk reading nothing while each file named alone pointed to that folder. It is the
    run the SDK folder is, in time order (the names sort by the second, then by kind)."""
    home = tmp_path / ".openhands"
    folder = home / "v1" / "events" / "0a1b2c3d-0000-4000-8000-00000000f019"
    folder.mkdir(parents=True)
    for path in sorted((SDK_RUN / "events").glob("event-*.json")):
        event = json.loads(path.read_text(encoding="utf-8"))
        second = event["timestamp"][:19].replace("-", "").replace("T", "").replace(":", "")
        (folder / f"{second}_{event['kind']}_{event['id'].replace('-', '')}").write_text(
            json.dumps(event, indent=2), encoding="utf-8")
    [sdk] = read_dump(SDK_RUN, tenant="acme")
    for given in (folder, home, tmp_path):  # the folder, the persistence dir, a home folder holding it
        [result] = read_dump(given, tenant="acme")
        assert result.ok, result.error
        run, want = result.trajectory, sdk.trajectory
        assert run.trajectory_id == want.trajectory_id
        assert [(s.action, s.arguments, s.error) for s in run.steps] == [
            (s.action, s.arguments, s.error) for s in want.steps]
    [alone] = read_dump(next(folder.iterdir()), tenant="acme")
    assert not alone.ok and alone.error.endswith(f"ingest the conversation folder {folder}")


def test_openhands_walk_of_a_home_folder_reads_the_app_servers_store(tmp_path: Path) -> None:
    """Bug (review of round 32): a walk of a home folder left ``.openhands/`` out as a hidden folder (no runs there),
    so the store was read only from ``~/.openhands`` or below. Its conversation folders are walked, as the other
    agent CLIs' session folders are."""
    _app_server_store(tmp_path / ".openhands")
    [result] = read_dump(tmp_path, tenant="acme")
    assert result.ok, result.error
    assert result.trajectory.trajectory_id == "openhands.0a1b2c3d00004000800000000000f019"
