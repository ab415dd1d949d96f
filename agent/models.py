"""Model access through litellm: one call with retries, backoff and a timeout; tokens and cost.

Any litellm model string works ("openai/gpt-5.2", "anthropic/claude-…", "ollama/…", or
"openai/<name>" with --api-base for a local OpenAI-compatible server); keys come from the usual
environment variables and are never logged. `scripted/…` models run offline (agent/scripted.py).
"""
from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

# litellm fetches its model price table from the network on import unless told not to; its
# bundled copy is what cost estimates use (offline, reproducible).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # noqa: E402

litellm.suppress_debug_info = True
litellm.telemetry = False

TRANSIENT = (litellm.RateLimitError, litellm.APIConnectionError, litellm.Timeout,
             litellm.ServiceUnavailableError, litellm.InternalServerError)


class ModelError(Exception):
    """The model could not be reached or refused the request (after retries where they make sense)."""


@dataclass
class Reply:
    content: str
    tool_calls: list[dict]  # {"id", "name", "arguments" (JSON text)}
    reasoning: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_reasoning: int = 0
    cost: Optional[float] = None  # USD, from litellm's bundled price table; None when unknown
    seconds: float = 0.0
    retries: list[str] = field(default_factory=list)  # the transient errors retried

    def message(self) -> dict:
        """The reply as the next request's assistant message (OpenAI format)."""
        msg = {"role": "assistant", "content": self.content or None}
        if self.tool_calls:
            msg["tool_calls"] = [{"id": c["id"], "type": "function",
                                  "function": {"name": c["name"], "arguments": c["arguments"]}}
                                 for c in self.tool_calls]
        return msg


def is_scripted(model: str) -> bool:
    return model.startswith("scripted/")


def complete(model: str, messages: list[dict], tools: list[dict], *, thinking: bool = False,
             timeout: float = 600.0, attempts: int = 6, backoff: float = 2.0, api_base: Optional[str] = None,
             sleep: Optional[Callable[[float], None]] = None) -> Reply:
    """One model turn. Transient errors (rate limits, connection, timeouts, 5xx) are retried with
    exponential backoff and jitter; anything else raises ModelError at once."""
    if is_scripted(model):
        from . import scripted
        scripted.register()
    kwargs = {"model": model, "messages": messages, "tools": tools, "timeout": timeout}
    if api_base:
        kwargs["api_base"] = api_base
    if thinking and not is_scripted(model):
        try:
            if litellm.supports_reasoning(model=model):
                kwargs["reasoning_effort"] = "high"
        except Exception:
            pass
    sleep = sleep or time.sleep
    retried: list[str] = []
    for attempt in range(attempts):
        t0 = time.monotonic()
        try:
            response = litellm.completion(**kwargs)
            break
        except TRANSIENT as exc:
            retried.append(f"{type(exc).__name__}: {str(exc)[:200]}")
            if attempt == attempts - 1:
                raise ModelError(f"{type(exc).__name__} after {attempts} attempts: {str(exc)[:300]}") from None
            sleep(min(backoff * 2 ** attempt, 60.0) * (0.5 + random.random() / 2))
        except litellm.APIError as exc:
            raise ModelError(f"{type(exc).__name__}: {str(exc)[:300]}") from None
        except Exception as exc:  # litellm raises more than its own types (bad model strings, …)
            raise ModelError(f"{type(exc).__name__}: {str(exc)[:300]}") from None
    seconds = time.monotonic() - t0
    choice = response.choices[0].message
    calls = [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments or "{}"}
             for c in (choice.tool_calls or [])]
    usage = getattr(response, "usage", None)
    details = getattr(usage, "completion_tokens_details", None)
    reply = Reply(content=choice.content or "", tool_calls=calls,
                  reasoning=getattr(choice, "reasoning_content", None) or "",
                  tokens_in=getattr(usage, "prompt_tokens", 0) or 0,
                  tokens_out=getattr(usage, "completion_tokens", 0) or 0,
                  tokens_reasoning=getattr(details, "reasoning_tokens", 0) or 0,
                  seconds=seconds, retries=retried)
    if is_scripted(model):
        reply.cost = 0.0
    else:
        try:
            reply.cost = float(litellm.completion_cost(completion_response=response))
        except Exception:
            reply.cost = None  # a model litellm has no price for (a local server)
    return reply
