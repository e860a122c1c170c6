"""Encoded blobs (an image's base64 in a tool's output) are indexed as a placeholder naming them, for every format
(:mod:`trajsearch.blobs`): the words beside an image find its step, its base64 finds nothing, and the stored trace
keeps the image."""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path

from trajsearch.ingest.read import read_inputs

from cli_support import newcomer, run_cli  # noqa: F401 (a fixture)

FIXTURES = Path(__file__).parent / "fixtures"
#: A real SWE-agent 1.1.0 run whose step 0 (``view_image``) output is a markdown image of a PNG in base64.
VIEW_IMAGE = FIXTURES / "swe-agent" / ".aud31" / "demo__greet-image.traj"


def _runs(*paths: Path) -> list:
    parsed = list(read_inputs([str(p) for p in paths], tenant="acme"))
    assert all(p.trajectory for p in parsed), [p.error for p in parsed]
    return [p.trajectory for p in parsed]


def _png_base64() -> str:
    """The real run's PNG, as the base64 its observation holds."""
    observation = json.loads(VIEW_IMAGE.read_text())["trajectory"][0]["observation"]
    return observation.split("base64,", 1)[1].rstrip(")\r\n ")


def _texts(ts, trajectory_id: str) -> list[str]:
    from trajsearch.store.filters import Filters

    return [row["text"] for row in ts.rows(Filters(tenant="acme"), ["text", "trajectory_id"])
            if row["trajectory_id"] == trajectory_id]


def _bash_run_texts(tmp_path: Path, ts, trajectory_id: str, task: str, steps: list[dict]) -> str:
    """The texts of the rows of a native run of ``steps``, read from a dump and added to ``ts``."""
    dump = tmp_path / f"{trajectory_id}.jsonl"
    dump.write_text(json.dumps({"trajectory_id": trajectory_id, "tenant": "acme", "outcome": "success",
                                "task": task, "steps": steps}) + "\n")
    (run,) = _runs(dump)
    ts.add([run])
    return "\n".join(_texts(ts, trajectory_id))


def test_view_image_step_is_found_by_its_words_and_its_base64_is_not_indexed(hashing_ts) -> None:
    (run,) = _runs(VIEW_IMAGE)
    hashing_ts.add([run])
    payload = _png_base64()
    assert len(payload) == 2_568

    hits = hashing_ts.search("diagram in the issue view_image diagram.png", tenant="acme", levels="step",
                             mode="lexical")
    assert hits and hits[0].step_index == 0
    assert "![/root/greet/diagram.png]([image/png, 3 KB base64])" in hits[0].text
    assert "iVBORw0KGgo" not in hits[0].text
    assert not any(payload[100:160] in text for text in _texts(hashing_ts, run.trajectory_id))
    polluted = hashing_ts.search(payload[100:160], tenant="acme", mode="lexical")
    assert not any(hit.verbatim or payload[100:160] in hit.text for hit in polluted)
    # what an exemplar shows of the run (its summary row's digest) names the image too
    (summary,) = hashing_ts.search("diagram.png", tenant="acme", levels="summary", mode="lexical")
    assert "[image/png, 3 KB base64]" in json.dumps(summary.steps) and "iVBORw0KGgo" not in json.dumps(summary.steps)
    # the stored trace is the run as it was: the image stays there to be seen
    trace = hashing_ts.get_trace(hits[0].trace_uri, tenant="acme")
    assert payload in trace.steps[0].observation


def test_bare_base64_and_data_uris_are_replaced_and_look_alikes_are_not(tmp_path: Path, hashing_ts) -> None:
    png = _png_base64()
    sha = "7fdef22a78083f1af1f748b7d41f5018719324ba"
    hex_digest = "0123456789abcdef" * 80  # 1,280 characters of hex: one case of letters, kept
    jwt = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0" * 25
           + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")  # dotted: kept
    minified = "function(a,b){return a+b};" * 60
    pdf = base64.b64encode(b"%PDF-1.7\n" + bytes(range(256)) * 8).decode()
    run = {"trajectory_id": "shots", "tenant": "acme", "outcome": "success",
           "task": f"Make the login page match the mock-up ![mock-up](data:image/png;base64,{png}) exactly",
           "steps": [
               {"index": 0, "action": "browser_take_screenshot", "arguments": {"filename": "login.png"},
                "observation": json.dumps([{"type": "text", "text": "Took a screenshot of the login form"},
                                           {"type": "image", "data": png, "mimeType": "image/png"}])},
               {"index": 1, "action": "bash", "arguments": {"command": "base64 -w0 report.pdf"},
                "observation": f"{pdf}\nwrote report.pdf summary"},
               {"index": 2, "action": "bash", "arguments": {"command": "git log -1 --format=%H && cat token"},
                "observation": f"{sha}\n{hex_digest}\n{jwt}\n{minified}"},
               {"index": 3, "action": "upload", "arguments": {"image": f"data:image/png;base64,{png}",
                                                              "caption": "login form"},
                "observation": "uploaded"}]}
    dump = tmp_path / "shots.jsonl"
    dump.write_text(json.dumps(run) + "\n")
    (trajectory,) = _runs(dump)
    hashing_ts.add([trajectory])
    texts = "\n".join(_texts(hashing_ts, "shots"))

    assert png[:40] not in texts and pdf[:40] not in texts
    assert "mock-up ![mock-up]([image/png, 3 KB base64]) exactly" in texts  # the task row
    assert '"data": "[image/png, 3 KB base64]"' in texts  # an MCP image content part, as JSON text
    assert "[application/pdf, 3 KB base64]\nwrote report.pdf summary" in texts  # a bare run, named by its bytes
    assert '"image": "[image/png, 3 KB base64]"' in texts  # an argument
    for kept in (sha, hex_digest, jwt, minified[:200]):
        assert kept in texts
    hits = hashing_ts.search("screenshot of the login form", tenant="acme", levels="step", mode="lexical")
    assert hits and hits[0].step_index == 0


def test_image_markdown_left_open_is_kept_and_read_in_linear_time(tmp_path: Path, hashing_ts) -> None:
    """An output full of ``![...](data:x;base64,`` never closed (a tool printing markdown it did not finish, or a
    hostile file), 1 MB of it in one step: a pattern that rescans the rest of the text from each one takes minutes
    (SWE-agent's own took 14 s for 288 KB, review of AUD2). It stays as it was; the real image before it is named."""
    traj = json.loads(VIEW_IMAGE.read_text())
    image = traj["trajectory"][0]["observation"].strip()
    traj["trajectory"][0]["observation"] = image + "\n" + "![](data:x;base64," * 60_000
    traj["trajectory"][1]["observation"] = "![](data:x;base64, unfinished (see the log) and more"
    path = tmp_path / "demo__greet-image.traj"
    path.write_text(json.dumps(traj))
    (run,) = _runs(path)
    hashing_ts.add([run])
    texts = _texts(hashing_ts, run.trajectory_id)
    assert any("result: ![/root/greet/diagram.png]([image/png, 3 KB base64])\n![](data:x;base64,![](" in text
               for text in texts)
    assert any("![](data:x;base64, unfinished (see the log) and more" in text for text in texts)
    assert not any("iVBORw0KGgo" in text for text in texts)


def test_show_the_run_page_and_uncapped_digests_name_the_image_and_the_trace_keeps_it(newcomer, hashing_ts) -> None:  # noqa: F811
    """What a person or an agent is shown of a run holds the image's placeholder as its rows do, not its base64: ``show``,
    the web run page, and the uncapped digests advice falls back to (into an agent's prompt) for a row with no digest.
    ``show --json`` is the trace as kept."""
    from trajsearch.digest import UNCAPPED, exemplar_digest, warning_digest
    from trajsearch.model import Outcome
    from trajsearch.service.auth import Principal
    from trajsearch.web.views.run import run_view

    payload = _png_base64()
    code, _, err = run_cli("ingest", str(VIEW_IMAGE), "-t", "acme")
    assert code == 0, err
    (run,) = _runs(VIEW_IMAGE)
    code, out, err = run_cli("show", run.trajectory_id, "-t", "acme")
    assert code == 0, err
    assert "result: ![/root/greet/diagram.png]([image/png, 3 KB base64])" in out and payload[:40] not in out
    code, out, _ = run_cli("show", run.trajectory_id, "-t", "acme", "--json")
    assert payload in json.loads(out)["steps"][0]["observation"]

    for digest in (exemplar_digest(run, UNCAPPED), warning_digest(run.model_copy(update={"outcome": Outcome.failure}), UNCAPPED)):
        assert payload[:40] not in json.dumps(digest.to_json())
    assert "[image/png, 3 KB base64]" in json.dumps(exemplar_digest(run, UNCAPPED).to_json())

    hashing_ts.add([run])
    view = run_view(hashing_ts, Principal("k", "acme", "read"), run.trajectory_id, similar=False)
    assert "[image/png, 3 KB base64]" in str(view.steps[0].observation.text) and payload[:40] not in str(view.steps)


def test_long_identifiers_are_kept_and_base64_of_text_is_named_text(tmp_path: Path, hashing_ts) -> None:
    """A bare run of 1,000 base64-alphabet characters is a blob only by its content (every such run "decodes"): a long
    CamelCase name, a path, UUIDs and words glued together stay searchable; a certificate's or a text's base64 is named
    so, random bytes' base64 is ``data`` (review of IMG31, #2 and #3)."""
    glued = {"camel": "".join(f"Handler{i}Factory" for i in range(80)),
             "snake": "_".join(f"Field{i}Value" for i in range(100)),
             "path": "/".join(f"Dir{i}Name" for i in range(150)),
             "words": "ThisIsAVeryLong" * 80 + "2",
             "uuids": "-".join(f"3F2504E0-4f89-11D3-9a0C-0305e82c{i:04d}" for i in range(40))}
    pem = base64.b64encode(b"-----BEGIN CERTIFICATE-----\n" + base64.encodebytes(bytes(range(256)) * 4)
                           + b"-----END CERTIFICATE-----\n").decode()
    text = base64.b64encode(b"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n" * 30).decode()
    noise = base64.b64encode(random.Random(31).randbytes(1_200)).decode()  # compressed or encrypted bytes
    steps = [{"index": n, "action": "bash", "arguments": {"command": f"echo {name}"}, "observation": value}
             for n, (name, value) in enumerate([*glued.items(), ("pem", pem), ("text", text), ("noise", noise)])]
    texts = _bash_run_texts(tmp_path, hashing_ts, "glued", "print long names", steps)
    for value in glued.values():
        assert value[:900] in texts
    assert "[PEM, 2 KB base64]" in texts and "[text, 2 KB base64]" in texts and "[data, 2 KB base64]" in texts
    assert pem[:40] not in texts and text[:40] not in texts and noise[:40] not in texts


def test_base64_wrapped_at_76_columns_is_one_blob(tmp_path: Path, hashing_ts) -> None:
    """``base64 diagram.png`` (GNU's default: 76 columns, how an agent most often prints a file) is one blob named by
    its bytes; the lines around it and a list of short hashes one a line stay (review of IMG31, #4)."""
    wrapped = base64.encodebytes(base64.b64decode(_png_base64())).decode()  # the real PNG, 76 columns, 34 lines
    hashes = "\n".join(base64.b64encode(random.Random(n).randbytes(32)).decode() for n in range(60))
    steps = [{"index": 0, "action": "bash", "arguments": {"command": "base64 diagram.png"},
              "observation": f"encoding diagram.png\n{wrapped}done encoding"},
             {"index": 1, "action": "bash", "arguments": {"command": "cat checksums"}, "observation": hashes}]
    texts = _bash_run_texts(tmp_path, hashing_ts, "wrapped", "print the diagram", steps)
    assert "encoding diagram.png\n[image/png, 3 KB base64]\ndone encoding" in texts
    assert wrapped.splitlines()[5] not in texts
    assert hashes.splitlines()[0] in texts and texts.count("KB base64]") == 1  # the hashes: kept
