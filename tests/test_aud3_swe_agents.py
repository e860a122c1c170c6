"""SWE-agent and mini-swe-agent files read as their producers meant them (probe AUD3, round 23).

SWE-agent defines commands of its own beside the shell: 0.x's ``config/commands`` (the cursors configs'
``set_cursors``, EnIGMA's ``decompile``, ``disassemble``, ``debug_*`` and ``connect_*``), 1.x's tool bundles
(``view_image``, the web browser's). A step calling one had the action ``bash``, so a search for runs that used
``disassemble`` found none. And a tool's coloured output kept the terminal's codes. The files are real runs; sources
in each fixture folder's ``SOURCE.md``.
"""

from __future__ import annotations

from pathlib import Path


from adapter_support import gemini_shell_step, only, runs

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


CUSTOM = Path(__file__).parent / "fixtures/swe-agent/.real/sa-1.1.0-custom-tool"


def test_a_custom_bundles_tool_is_the_tool_the_file_names() -> None:
    """Bug (review of AUD3): a tool from a bundle of the user's own (``run_tests``) read as ``bash``, as only
    SWE-agent's own tools are listed. The file names it: the function a 1.x function-calling run called, the
    command a text-mode run's system prompt documents. Shell commands stay ``bash``."""
    called = only(CUSTOM / "demo__greet-custom-fc/demo__greet-custom-fc.traj")
    assert [s.action for s in called.steps] == ["run_tests", "str_replace_editor", "run_tests", "submit", "submit"]
    documented = only(CUSTOM / "demo__greet-custom-text/demo__greet-custom-text.traj")
    assert [s.action for s in documented.steps] == ["run_tests", "bash", "run_tests", "submit"]
    assert documented.steps[0].arguments == {"command": "run_tests tests"}


PROGRAMBENCH = Path(__file__).parent / ("fixtures/mini-swe-agent/.real/programbench-2.4.6-compilers/"
                                        "testorg__wordcount.abc1234/testorg__wordcount.abc1234.traj.json")


def test_swe_agent_outputs_lose_the_terminals_colour_codes() -> None:
    """Bug: every coding-CLI adapter drops a tool's terminal codes (``steps.strip_terminal_codes``: presentation, and
    in search tokens ``21mprivate``), but SWE-agent's kept them: EnIGMA's ``RsaCtfTool.py`` output
    ``ESC[33;21mprivate argument is not set ...ESC[0m``."""
    capsule = only(CTF / "BabyTimeCapsule.first-5-steps.traj")
    assert capsule.steps[4].observation == ("private argument is not set, the private key will not be displayed, "
                                            "even if recovered.")
    assert not [s for s in capsule.steps if "\x1b" in (s.observation or "")]


def test_mini_swe_agent_outputs_lose_the_terminals_colour_codes() -> None:
    """Bug: as SWE-agent's, mini-swe-agent's tool output kept the terminal's codes: Maven's ``ESC[0mESC[0m[INFO]
    Scanning ...`` (split from the SWE-agent test by the review of AUD3, so that each fix fails a test of its own)."""
    maven = next(s for s in only(PROGRAMBENCH).steps if s.arguments["command"] == "cd mvn && mvn -o -B compile")
    assert maven.observation.startswith("<returncode>1</returncode>\n<output>\n[INFO] Scanning for projects...")
    assert not [s for s in only(PROGRAMBENCH).steps if "\x1b" in (s.observation or "")]


def test_a_character_set_switch_and_a_code_cut_short_leave_no_trace(tmp_path: Path) -> None:
    """Bug (review of AUD3): the terminal-code pattern kept ``ESC(B``, the character-set switch ``tput sgr0`` writes
    before ``ESC[m`` (its bytes for xterm below), and read ``ESC[`` then the text's own ``[`` as one code, so
    ``ESC[[INFO] built`` lost its bracket. Read through a real gemini-cli shell step with that output."""
    step = gemini_shell_step("\x1b(B\x1b[mdone\n\x1b[[INFO] built", tmp_path)
    assert step.observation == "done\n[INFO] built"


COLOURS = Path(__file__).parent / "fixtures/mini-swe-agent/.real/mini-2.4.6-colours"


def test_mini_yaml_json_observations_lose_the_terminals_colour_codes() -> None:
    """Bug (review of AUD3): 2.x ``mini.yaml`` renders a tool's output through Jinja's ``tojson``, so ESC arrives as
    the six characters ``\\u001b`` and the observation kept ``\\u001b[01;31m\\u001b[Kerror``, its error line too."""
    [grep, _] = only(COLOURS / "demo__greet-json/demo__greet-json.traj.json").steps
    assert grep.observation == '{\n  "returncode": 1,\n  "output": "2:error: undefined name nmae\\n"\n}'
    assert grep.error == "2:error: undefined name nmae (exit code 1)"


def test_a_custom_templates_error_is_read_from_raw_output_without_the_terminals_codes() -> None:
    """Bug (review of AUD3): a 2.x run whose ``observation_template`` shows neither ``<returncode>`` nor
    ``mini.yaml``'s JSON has its error read from ``extra.raw_output``, the output as it came, codes and all."""
    [grep, _] = only(COLOURS / "demo__greet-plain/demo__greet-plain.traj.json").steps
    assert grep.observation == "2:error: undefined name nmae\n"
    assert grep.error == "2:error: undefined name nmae (exit code 1)"
