"""Whether a Harbor trial's exception voids the verifier's reward, and whether it is the agent's own failure, as
Harbor itself judges them.

Harbor runs the verifier after most agent failures and records both the reward and the exception in the trial's
``result.json``. Its error policy (harbor 0.26 ``models/trial/error_policy.py``: ``ErrorPolicy.has_valid_reward``,
``TrialResult.reward_valid``) says, by the exception's type name, whether that reward grades the agent's work: it
does after the agent's own failures (``NonZeroAgentExitCodeError``, ``AgentTimeoutError``,
``ContextWindowExceededError``, ...), it does not after the model provider's (``ApiRateLimitError``,
``ApiOverloadedError``, ...) or the sandbox's (``SandboxLikelyOutOfMemoryError``, ...): there the reward (mostly 0)
says only that the agent was cut off. (Whether Harbor runs the trial again is another matter: it does not by default,
``RetryConfig.max_retries`` is 0, several void groups are never retried, and a retried trial's folder is replaced.)

Harbor 0.26 writes its verdict into ``result.json`` (the computed fields ``exception_info.policy`` and
``reward_valid``, the job's ``override_error_policy`` applied): that verdict is read first, so a Harbor whose table
differs from the copy here is read as it judged. The copy serves files written without it: a type it does not name
keeps its reward, as in Harbor; a trial's ``policy_override`` wins.

The same table says which exceptions are the agent's own failure: its group that is graded, keeps its reward and is
never retried (``NonZeroAgentExitCodeError``, ``AgentTimeoutError``, ``ContextLengthExceededError``, ...). Harbor
counts a non-zero exit of the agent's process there too: ``BaseInstalledAgent._classify_exec_error`` raises the
provider's errors it finds in the agent's output as their own types (``ApiRateLimitError``, ...), so what is left
plain ``NonZeroAgentExitCodeError`` is, to Harbor, the agent crashing; but its patterns miss some (strands' HTTP
500), and a crash whose decisive line is such an outage is read as the provider's (:func:`agents_own`).
"""

from __future__ import annotations

import re
from typing import Any

from trajsearch.model import Outcome

from ._common import as_dict, decisive_line
from ._spans.outcome import error_outcome

#: Harbor 0.26's exception types whose trial reward is not valid (its ``has_valid_reward=False`` groups).
_REWARD_VOID = frozenset({
    # the sandbox or the harness failed (not graded)
    "EnvironmentStartTimeoutError", "SandboxBuildFailedError", "AgentSetupTimeoutError", "HealthcheckError",
    "SandboxLikelyOutOfMemoryError", "MemoryLimitExceededError", "SSHAccessError", "GKEExecStreamClosedError",
    "GKEPodNotFoundError", "RuntimeRequestError", "AddTestsDirError", "DownloadVerifierDirError",
    # the model provider failed the agent (graded, reward invalid)
    "ApiError", "ApiRateLimitError", "ApiInternalServerError", "ApiOverloadedError", "ApiConnectionClosedError",
    "ApiResponseStalledError", "UnknownApiError", "NetworkConnectionError", "ApiConnectionError",
    "ApiUsageLimitError", "RateLimitError", "InternalServerError", "ServiceUnavailableError", "APIConnectionError",
    "APIError", "Timeout",
    # the request or the verifier failed
    "UnsupportedModelParametersError", "BadRequestError", "UnprocessableEntityError", "UnsupportedParamsError",
    "APIResponseValidationError", "BudgetExceededError", "VerifierTimeoutError", "RewardFileNotFoundError",
    "RewardFileEmptyError", "VerifierOutputParseError",
    # credentials, model, cancellation
    "AgentAuthenticationError", "ModelNotFoundError", "ApiProviderResourceNotFoundError", "AuthenticationError",
    "PermissionDeniedError", "NotFoundError", "ServiceOperationsUnsupportedError", "VercelScopeError",
    "DspyImportError", "MissingExtraError", "RegradeError", "CancelledError",
})


#: Harbor 0.26's exception types that are the agent's own failure (its ``should_retry=False, should_grade=True,
#: has_valid_reward=True`` group).
_AGENTS_OWN = frozenset({
    "NonZeroAgentExitCodeError", "AgentTimeoutError", "ContextWindowExceededError", "OutputTokenExceededError",
    "ContextLengthExceededError", "OutputLengthExceededError", "AgentSafetyRefusalError",
    "ContentPolicyViolationError",  # litellm's
})

#: The recorded policy (``exception_info.policy``) of that group: (``should_retry``, ``should_grade``,
#: ``has_valid_reward``).
_AGENTS_OWN_POLICY = (False, True, True)


def agents_own(exception: dict[str, Any]) -> bool:
    """Whether Harbor counts a trial's exception (its ``exception_info``) the agent's own failure, not the harness's,
    the sandbox's or the model provider's: by the policy the file records, else by the copy of Harbor's table (a type
    it does not name is not, as Harbor retries it). Save a plain ``NonZeroAgentExitCodeError`` whose decisive line is
    the provider's outage (:func:`error_outcome`: a 5xx, a connection reset, a rate limit) or names a type the table
    counts the provider's or the harness's (litellm's ``AuthenticationError``, ...): Harbor raises it for a crash its
    ``ERROR_PATTERNS`` did not recognise (strands' ``Error code: 500``), and calls those it does recognise, and those
    litellm types where they escape an agent run in its own process, the provider's."""
    policy = as_dict(exception.get("policy"))
    recorded = tuple(policy.get(k) for k in ("should_retry", "should_grade", "has_valid_reward"))
    kind = str(exception.get("exception_type") or "")
    own = recorded == _AGENTS_OWN_POLICY if all(isinstance(v, bool) for v in recorded) else kind in _AGENTS_OWN
    if own and kind == "NonZeroAgentExitCodeError":
        line = decisive_line(str(exception.get("exception_message") or "")) or ""
        named = _RAISED_TYPE.match(line)
        return not (named and named[1] in _REWARD_VOID or line and error_outcome(line) is Outcome.infra_error)
    return own


#: The type an exception line names (``litellm.exceptions.AuthenticationError: ...`` -> ``AuthenticationError``).
_RAISED_TYPE = re.compile(r"(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*):")


def reward_void(exception: dict[str, Any], reward_valid: Any = None) -> bool:
    """Whether Harbor counts the reward of a trial that recorded ``exception`` (its ``exception_info``) invalid.

    ``reward_valid`` is the trial's recorded ``reward_valid``, passed only where the trial has a reward (Harbor
    writes it false for a trial without one) and the exception is the trial's own."""
    recorded = as_dict(exception.get("policy")).get("has_valid_reward")
    if isinstance(recorded, bool):
        return not recorded
    if isinstance(reward_valid, bool):
        return not reward_valid
    override = as_dict(exception.get("policy_override")).get("has_valid_reward")
    if isinstance(override, bool):
        return not override
    return str(exception.get("exception_type") or "") in _REWARD_VOID
