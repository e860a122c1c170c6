"""Agentless' text log of one SWE-bench instance (``localization_logs/<instance>.log``), a real one trimmed
(tests/fixtures/agentless/.sweexp30/README.md): log lines for people, no run; refused naming what it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.detect import detect_format

from cli_support import run_cli

LOG = Path(__file__).parent / "fixtures" / "agentless" / ".sweexp30" / "django__django-11206.log"


def test_an_agentless_log_is_refused_naming_what_it_is() -> None:
    with pytest.raises(ValueError, match="no run in this file: Agentless' text log of SWE-bench instance "
                                         r"django__django-11206 \(its localization or repair prompts"):
        detect_format(LOG)


def test_cli_says_so_for_the_log_named(home: Path) -> None:
    code, out, err = run_cli("ingest", str(LOG), "-t", "acme", "--dry-run")
    assert code != 0 and "Agentless' text log of SWE-bench instance django__django-11206" in out + err, out + err


def test_a_log_of_several_instances_is_not_named_after_its_first(tmp_path: Path) -> None:
    # Agentless' concatenated logs (a repair log of many instances): all the head names are said
    log = tmp_path / "repair_cp.log"
    text = LOG.read_text()
    log.write_text(text + text.replace("django__django-11206", "django__django-11099"))
    with pytest.raises(ValueError, match="Agentless' text log of SWE-bench instances django__django-11206, "
                                         r"django__django-11099 \(those its head names; its localization"):
        detect_format(log)
