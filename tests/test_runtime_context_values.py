"""The façade's runtime context refuses a version or tool no filter can name, as every other door does (review
r37-ux, 4): ``RuntimeContext(tenant="demo", tools_available=["a\\nb"])`` was taken, and ``Runtime.context_for`` answered
with it, while gRPC said "context.tools_available[0]: contains control characters", and the CLI and the MCP server
refuse it too. An empty value stays the library's own ("" is the runs with no version recorded)."""

from __future__ import annotations

import pytest

from trajsearch.runtime import RuntimeContext


@pytest.mark.parametrize("field", ["env_version", "policy_version", "tools_available"])
@pytest.mark.parametrize(("value", "said"),
                         [("a\nb", "contains control characters"), ("v" * 201, "too long (201 > 200")],
                         ids=["newline", "long"])
def test_a_context_value_no_filter_can_name_is_refused_naming_its_field(field: str, value: str, said: str) -> None:
    with pytest.raises(ValueError) as refused:
        RuntimeContext(tenant="demo", **{field: [value]})
    assert str(refused.value).startswith(field) and said in str(refused.value), refused.value


def test_a_context_value_with_quotes_or_an_empty_version_is_taken_as_it_is() -> None:
    context = RuntimeContext(tenant="demo", env_version=["", 'v2" || tenant != "x\\'], tools_available=["bash"])
    assert context.env_version == ("", 'v2" || tenant != "x\\') and context.tools_available == ("bash",)
