"""Whether a Harbor trial's exception voids the verifier's reward, as Harbor itself judges it.

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
"""

from __future__ import annotations

from typing import Any

from ._common import as_dict

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
