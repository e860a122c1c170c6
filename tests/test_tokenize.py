"""The log/code tokenizer keeps exact strings whole and in parts."""

from __future__ import annotations

import pytest

from trajsearch.store.tokenize import tokenize, tokenize_query


def unigrams(text: str) -> list[str]:
    return tokenize(text, bigrams=False)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("exit code 137", ["exit", "code", "137"]),
        ("exit code 1", ["exit", "code", "1"]),
        ("os.path.join", ["os.path.join", "os", "path", "join"]),
        ("run_tests", ["run_tests", "run", "tests"]),
        ("src/app/main.py", ["src/app/main.py", "app/main.py", "src", "app", "main.py", "main", "py"]),
        ("-x", ["-x", "x"]),
        ("--tb=short", ["--tb=short", "--tb", "tb", "short"]),
        ("'yaml'", ["yaml"]),
        ("ModuleNotFoundError", ["modulenotfounderror", "module", "not", "found", "error"]),
    ],
)
def test_exact_tokens(text: str, expected: list[str]) -> None:
    assert unigrams(text) == expected


def test_error_line_keeps_class_name_and_quoted_module() -> None:
    tokens = unigrams("ModuleNotFoundError: No module named 'yaml'")
    assert tokens == ["modulenotfounderror", "module", "not", "found", "error", "no", "module", "named", "yaml"]


def test_command_line() -> None:
    tokens = unigrams("pytest -x tests/test_api.py")
    assert tokens[:3] == ["pytest", "-x", "x"]
    assert {"tests/test_api.py", "tests", "test_api.py", "test_api", "test", "api", "py"} <= set(tokens)


def test_paths_absolute_and_relative_share_subpath() -> None:
    absolute = set(unigrams('File "/testbed/pvlib/tools.py", line 302'))
    relative = set(unigrams("./pvlib/tools.py"))
    assert {"pvlib/tools.py", "tools.py", "302", "line"} <= absolute
    assert "pvlib/tools.py" in relative
    assert "c:\\users\\a.txt" in unigrams("C:\\Users\\a.txt") and "users/a.txt" in unigrams("C:\\Users\\a.txt")


def test_key_value_file_line_and_numbers() -> None:
    assert unigrams("timeout=30") == ["timeout=30", "timeout", "30"]
    assert unigrams("main.py:42") == ["main.py:42", "main.py", "main", "py", "42"]
    assert unigrams("python3.11") == ["python3.11", "python3", "python", "3", "11"]
    assert unigrams("0 1 137 -1") == ["0", "1", "137", "-1", "1"]


def test_camel_and_acronyms() -> None:
    assert unigrams("HTTPError") == ["httperror", "http", "error"]
    assert unigrams("getUserDetails") == ["getuserdetails", "get", "user", "details"]
    assert unigrams("_golden_sect_DataFrame") == [
        "_golden_sect_dataframe", "golden", "sect", "dataframe", "data", "frame"]


def test_no_stemming_no_stop_words_lowercase() -> None:
    assert unigrams("The Tests are Running") == ["the", "tests", "are", "running"]


def test_bigrams_join_adjacent_chunks_and_never_collide_with_unigrams() -> None:
    tokens = tokenize("exit code 137")
    assert tokens == ["exit", "code", "137", "exit code", "code 137"]
    assert "exit code" not in tokenize("exit_code")
    assert "code 137" not in tokenize("exit code 1")


def test_punctuation_and_empty() -> None:
    assert tokenize("") == []
    assert tokenize("  -> | ... ") == []
    assert unigrams("foo(bar, 'baz')!") == ["foo", "bar", "baz"]


def test_long_blob_keeps_parts_only() -> None:
    blob = "a" * 150 + "/tail.txt"
    tokens = unigrams(blob)
    assert all(len(t) <= 120 for t in tokens)
    assert "tail.txt" in tokens


def test_deterministic_across_memo_states() -> None:
    from trajsearch.store import tokenize as module

    text = "Traceback: File src/app/main.py, line 3, in run_tests: KeyError: 'id' exit code 137"
    first = tokenize(text)
    module._tokens_of.clear()
    module._wholes_of.clear()
    assert tokenize(text) == first
    assert tokenize(text) == first  # memoised path


@pytest.mark.parametrize(
    ("text", "primary", "parts"),
    [
        ("a" + "/" * 19998 + "b", ["a/b"], ["a", "b"]),
        ("cd " + "." * 19990 + "/src", ["cd", "src", "cd src"], []),
        ("\\" * 20000 + "C:\\Users\\me", ["c"], ["\\users\\me", "users/me", "users", "me"]),
    ],
    ids=["slashes", "dots", "backslashes"],
)
def test_a_long_run_of_path_marks_yields_the_same_tokens(text: str, primary: list[str], parts: list[str]) -> None:
    """Bug (probe I, I1): a chunk was tried from each mark of a long run of ``/``, ``.``, ``-`` or ``\\``,
    scanning to the run's end each time (quadratic: seconds per 20,000-character query or output line).
    A chunk now starts where its marks start; the tokens are the ones the old pattern gave."""
    assert tokenize_query(text) == (primary, parts)
