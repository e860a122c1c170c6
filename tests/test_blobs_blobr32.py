"""Blobs the rule (:mod:`trajsearch.blobs`) missed before round 32: JSON-escaped base64, headerless uncompressed bytes,
audio, and a message's image part named in words of its own (``[image]``) instead of the blob's placeholder."""

from __future__ import annotations

import base64
import json
import signal
import wave
from pathlib import Path

from trajsearch.blobs import MIN_RUN, image_placeholder, without_blobs
from trajsearch.ingest.read import read_inputs

from adapter_support import only
from test_adapters_agent_clis import _assistant, _cc, write_jsonl
from test_adapters_goose import EXPORT
from test_blobs_img31 import _bash_run_texts, _png_base64

HERE = Path(__file__).parent / "fixtures" / "native" / ".blobr32"


def _json_escaped(value: object) -> str:
    """``value`` as PHP's ``json_encode`` writes it by default (its slashes escaped: ``image\\/png``), the form real
    API responses and committed JSON show (a WordPress or Laravel API, an APK parser's cache of its icons)."""
    return json.dumps(value).replace("/", "\\/")


def test_json_escaped_data_uris_and_base64_are_named(tmp_path: Path, hashing_ts) -> None:
    png = _png_base64()
    response = _json_escaped({"mime_type": "image/png", "icon": f"data:image/png;base64,{png}", "thumb": png,
                              "path": "res/drawable-ldpi/ic_launcher.png"})
    assert "data:image\\/png;base64," in response and "\\/" in response.split("base64,")[1][:200]
    steps = [{"index": 0, "action": "bash", "arguments": {"command": "curl -s localhost:8000/api/apps/1"},
              "observation": f"{response}\nHTTP 200"}]
    texts = _bash_run_texts(tmp_path, hashing_ts, "escaped", "show the app's icon", steps)
    assert '"icon": "[image/png, 3 KB base64]", "thumb": "[image/png, 3 KB base64]"' in texts
    assert '"mime_type": "image\\/png"' in texts and '"res\\/drawable-ldpi\\/ic_launcher.png"}\nHTTP 200' in texts
    assert png[:40] not in texts and png[-60:].replace("/", "\\/")[:30] not in texts


def test_image_parts_are_named_as_their_blob_is_in_text(tmp_path: Path) -> None:
    """A screenshot a tool returned as an image part (Claude Code's ``tool_result`` content, Anthropic's shape; some
    come without ``media_type``) reads as the placeholder its base64 gets anywhere else, not ``[image]``; an image
    named by its URL alone has nothing more to say and stays ``[image]``."""
    png = _png_base64()
    shot = {"type": "tool_use", "id": "toolu_01Shot", "name": "mcp__playwright__browser_take_screenshot",
            "input": {"filename": "login.png"}}
    lines = [
        _cc("user", "u1", "2026-03-01T22:38:47.557Z", message={"role": "user", "content": "check the login page"}),
        _assistant("a1", "2026-03-01T22:38:52.000Z", "msg_015o", shot),
        _cc("user", "u2", "2026-03-01T22:38:55.000Z", message={"role": "user", "content": [
            {"tool_use_id": shot["id"], "type": "tool_result", "content": [
                {"type": "text", "text": "Took the screenshot of the login form"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
                {"type": "image", "source": {"type": "base64", "data": png}},
                {"type": "image", "source": {"type": "url", "url": "https://example.com/login.png"}}]}]}),
        _assistant("a2", "2026-03-01T22:39:01.000Z", "msg_016x", {"type": "text", "text": "The form is there."}),
    ]
    path = write_jsonl(tmp_path / "2ff46cd5-f4e7-4724-bb20-579dae7956ea.jsonl", lines)
    (parsed,) = [p for p in read_inputs([str(path)], tenant="acme") if p.trajectory]
    assert parsed.trajectory.steps[0].observation == \
        "Took the screenshot of the login form\n[image/png, 3 KB base64]\n[image/png, 3 KB base64]\n[image]"


def test_headerless_bytes_and_audio_are_named_and_real_look_alikes_stay() -> None:
    """Audio by its header (a real WAV); uncompressed bytes with no header by what they decode to (a tenth of them
    0x00 or 0xFF: silence, flat pixels, integers); UTF-16 text (PowerShell's ``-EncodedCommand``) as text. The long
    runs of base64's alphabet that are not base64 found on disk (a hex modulus, a long integer) stay, and so do real
    Cython-mangled symbols glued (mixed case and digits, decoding to 6.4% 0x00/0xFF: what :func:`_looks_raw` reads,
    the closest real run found to its tenth), as UTF-16 with a byte order mark or big-endian is text."""
    wav = (HERE / "pluck-pcm16-head.wav").read_bytes()
    with wave.open(str(HERE / "pluck-pcm16-head.wav")) as audio:
        samples = audio.readframes(audio.getnframes())  # the real samples, with no header: random enough already
    silence_then_pluck = bytes(2_000) + samples  # a recording's opening silence, headerless
    pixels = bytes([0x1e, 0x1e, 0x1e, 0xff] * 20 + [0xf0, 0xf0, 0xf0, 0xff] * 20) * 12  # raw RGBA: dark and light bars
    command = "$c = New-Object Net.WebClient; $c.DownloadFile($u, $f); " * 20
    outputs = {"audio/wav": wav, "data": silence_then_pluck, "data ": pixels, "text": command.encode("utf-16-le"),
               "text ": command.encode("utf-16"), "text  ": command.encode("utf-16-be"),
               "text   ": command.encode("utf-8-sig")}
    for kind, raw in outputs.items():
        encoded = base64.b64encode(raw).decode()
        assert without_blobs(f"$ base64 -w0 out\n{encoded}\nok") == \
            f"$ base64 -w0 out\n[{kind.strip()}, {round(len(encoded) / 1024):,} KB base64]\nok", kind
    for kept in (HERE / "lookalikes.txt").read_text().splitlines():
        assert len(kept) >= MIN_RUN and without_blobs(f"modulus: {kept}") == f"modulus: {kept}"


def test_escaped_near_base64_is_read_in_linear_time() -> None:
    """13 MB of ``\\/`` and symbols in runs just short of a blob, and a long run that is no base64, before an escaped
    image: the image named, the rest unchanged, in a bounded time (0.6 s; 35 s when a run could also start at each
    ``/`` its ``\\`` escapes, re-reading the rest of the run: the alarm is the guard, not the bench)."""
    hostile = ("\\/" * (MIN_RUN // 2 - 1) + " ") * 5_000 + ("A\\/b" * (MIN_RUN // 4 - 1) + "\\ ") * 5_000
    hostile += "x\\/" * 1_000_000 + "\n"
    image = _json_escaped({"icon": f"data:image/png;base64,{_png_base64()}"})
    signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError("not linear")))
    signal.alarm(300)
    try:
        assert without_blobs(hostile + image) == hostile + '{"icon": "[image/png, 3 KB base64]"}'
    finally:
        signal.alarm(0)


def test_gooses_mcp_image_content_is_named_as_its_blob_and_tiny_or_no_base64_data_is_only_an_image(
        tmp_path: Path) -> None:
    """goose keeps an MCP tool's image content as it came (``data``, ``mimeType``): named as a blob in text is, not
    ``[image]``. A part whose ``data`` is a few characters, or no base64, says no more than ``[image]`` (a data URI of
    under 100 characters in text is left as it is too)."""
    session = json.loads(EXPORT.read_text())
    session["conversation"][4]["content"][0]["toolResult"]["value"]["content"] = [
        {"type": "text", "text": "Screenshot of the login form"},
        {"type": "image", "data": _png_base64(), "mimeType": "image/png"}]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(session))
    assert only(path).steps[1].observation == "Screenshot of the login form\n[image/png, 3 KB base64]"
    for data in ("iVBORw0KGgo=", "not base64 at all, a path: /tmp/screenshots/login-form-after-submit-clicked.png "
                 "(the tool could not read it back)"):
        assert image_placeholder({"type": "image", "data": data, "mimeType": "image/png"}) == "[image]", data
