"""SWE-agent and mini-swe-agent files read as their producers meant them (probe AUD3, round 23).

SWE-agent defines commands of its own beside the shell: 0.x's ``config/commands`` (the cursors configs'
``set_cursors``, EnIGMA's ``decompile``, ``disassemble``, ``debug_*`` and ``connect_*``), 1.x's tool bundles
(``view_image``, the web browser's). A step calling one had the action ``bash``, so a search for runs that used
``disassemble`` found none. And a tool's coloured output kept the terminal's codes. The files are real runs; sources
in each fixture folder's ``SOURCE.md``.
"""

from __future__ import annotations

from pathlib import Path


from adapter_support import only, runs

CTF = Path(__file__).parent / "fixtures/swe-agent/.real/ctf"


def test_enigma_commands_are_their_own_tools_and_shell_commands_stay_bash() -> None:
    warmup = only(CTF / "warmup.traj")
    assert [s.action for s in warmup.steps] == ["disassemble", "disassemble", "create", "edit", "edit", "bash",
                                                "submit"]
    assert warmup.steps[5].arguments == {"command": "python exploit.py"}
    capsule = only(CTF / "BabyTimeCapsule.first-5-steps.traj")
    assert [s.action for s in capsule.steps] == ["open", "connect_start", "connect_sendline", "connect_sendline", "bash"]
    rock = only(CTF / "rock.traj")
    assert {s.action for s in rock.steps if s.arguments["command"].startswith("decompile")} == {"decompile"}


def test_a_run_is_found_by_the_enigma_tool_it_called(hashing_ts) -> None:
    for path in (CTF / "warmup.traj", CTF / "BabyTimeCapsule.first-5-steps.traj"):
        hashing_ts.add(runs(path, tenant="acme"))
    hits = hashing_ts.search("binary exploitation", tenant="acme", tools="disassemble", k=5)
    assert {h.trajectory_id for h in hits} == {only(CTF / "warmup.traj").trajectory_id}


PROGRAMBENCH = Path(__file__).parent / ("fixtures/mini-swe-agent/.real/programbench-2.4.6-compilers/"
                                        "testorg__wordcount.abc1234/testorg__wordcount.abc1234.traj.json")


def test_swe_agent_and_mini_swe_agent_outputs_lose_the_terminals_colour_codes() -> None:
    """Bug: every coding-CLI adapter drops a tool's terminal codes (``steps.strip_terminal_codes``: presentation, and
    in search tokens ``21mprivate``), but SWE-agent's and mini-swe-agent's kept them: EnIGMA's ``RsaCtfTool.py``
    output ``ESC[33;21mprivate argument is not set ...ESC[0m``, Maven's ``ESC[0mESC[0m[INFO] Scanning ...``."""
    capsule = only(CTF / "BabyTimeCapsule.first-5-steps.traj")
    assert capsule.steps[4].observation == ("private argument is not set, the private key will not be displayed, "
                                            "even if recovered.")
    maven = next(s for s in only(PROGRAMBENCH).steps if s.arguments["command"] == "cd mvn && mvn -o -B compile")
    assert maven.observation.startswith("<returncode>1</returncode>\n<output>\n[INFO] Scanning for projects...")
    assert not [s for s in only(PROGRAMBENCH).steps + capsule.steps if "\x1b" in (s.observation or "")]
