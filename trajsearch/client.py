"""The Python client of a trajsearch server: ``from trajsearch.client import Client``.

See :mod:`trajsearch.service.client`.
"""

from .service.client import (
    Client,
    ContextResult,
    DataLoss,
    DeadlineExceeded,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    RemoteIngestReport,
    ServiceError,
    Unauthenticated,
    Unavailable,
)

__all__ = [
    "Client",
    "ContextResult",
    "DataLoss",
    "DeadlineExceeded",
    "InvalidArgument",
    "NotFound",
    "PermissionDenied",
    "RemoteIngestReport",
    "ServiceError",
    "Unauthenticated",
    "Unavailable",
]
