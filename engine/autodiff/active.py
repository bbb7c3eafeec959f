"""The gradient tapes recording in this thread or asyncio task: the state tapes, traced values and Variables share."""

from contextvars import ContextVar

#: The tapes of this context, outermost first; empty when none records.
TAPES: ContextVar[tuple] = ContextVar("nodeweave_gradient_tapes", default=())
