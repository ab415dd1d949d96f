"""Model access through litellm: one call with retries, backoff and a timeout; tokens and cost.

Any litellm model string works ("openai/gpt-5.2", "anthropic/claude-…", "ollama/…", or
"openai/<name>" with --api-base for a local OpenAI-compatible server); keys come from the usual
environment variables and are never logged. `scripted/…` models run offline (agent/scripted.py).
"""
from __future__ import annotations

import os
import random
import re
import time
import warnings
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
MAX_WAIT = 60.0  # seconds: the longest backoff or Retry-After honoured between two attempts
DEFAULT_MAX_TOKENS = 16_384  # per reply: enough for a long kernel; a cut reply is recorded and handled


class ModelError(Exception):
    """The model could not be reached or refused the request (after retries where they make sense).
    `retries`: the transient errors retried before it."""

    def __init__(self, message: str, retries: Optional[list[str]] = None):
        super().__init__(message)
        self.retries = list(retries or [])


class ConfigError(Exception):
    """The model cannot be called as configured (unknown provider, missing key): found before any request."""


class _EmptyReply(Exception):
    """A 200 answer without a choice: a server fault, retried like a 5xx."""


@dataclass
class Reply:
    content: str
    tool_calls: list[dict]  # {"id", "name", "arguments" (JSON text as the server sent it)}
    reasoning: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_reasoning: int = 0
    cost: Optional[float] = None  # USD, from litellm's bundled price table; None when unknown
    seconds: float = 0.0
    retries: list[str] = field(default_factory=list)  # the transient errors retried
    finish_reason: Optional[str] = None  # "stop", "tool_calls", "length" (cut by max_tokens), …

    def message(self, arguments: Optional[list[str]] = None) -> dict:
        """The reply as the next request's assistant message (OpenAI format); `arguments` replaces
        each call's arguments (the loop replays only valid, bounded JSON)."""
        msg = {"role": "assistant", "content": self.content or None}
        if self.tool_calls:
            msg["tool_calls"] = [{"id": c["id"], "type": "function",
                                  "function": {"name": c["name"],
                                               "arguments": arguments[i] if arguments else c["arguments"]}}
                                 for i, c in enumerate(self.tool_calls)]
        return msg


def is_scripted(model: str) -> bool:
    return model.startswith("scripted/")


def check_config(model: str, api_base: Optional[str] = None) -> None:
    """Raise ConfigError when `model` cannot be called: a provider litellm does not know, or a key
    its provider needs missing from the environment (litellm's own key validation). No request."""
    if is_scripted(model):
        return
    try:
        _, provider, _, _ = litellm.get_llm_provider(model=model, api_base=api_base)
    except Exception:
        raise ConfigError(f"litellm knows no provider for model '{model}': write it as PROVIDER/NAME, e.g. "
                          "openai/gpt-5.2, anthropic/claude-sonnet-4-5, hosted_vllm/NAME or ollama/NAME "
                          "(https://docs.litellm.ai/docs/providers)") from None
    try:
        env = litellm.validate_environment(model=model, api_base=api_base)
    except Exception:
        return  # litellm cannot tell: the first request will say
    missing = env.get("missing_keys") or []
    if missing:
        hint = (" (a local server that checks no key takes any value, e.g. " f"{missing[0]}=none)"
                if api_base and provider == "openai" else "")
        raise ConfigError(f"model '{model}' ({provider}) needs {', '.join(missing)} in the environment: set "
                          f"{' and '.join(missing)}{hint}")


def _retry_after(exc: Exception) -> Optional[float]:
    """The server's Retry-After (seconds or an HTTP date), if it sent one."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    try:
        value = headers.get("retry-after") or headers.get("Retry-After")
    except Exception:
        return None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        from email.utils import parsedate_to_datetime
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


def _describe(exc: Exception, timeout: float) -> str:
    if isinstance(exc, litellm.Timeout):
        return f"Timeout: no answer within {timeout:g} s"
    if isinstance(exc, _EmptyReply):
        return f"EmptyReply: {exc}"
    raw = str(exc)
    head, mark, tb = raw.partition("Traceback (most recent call last)")
    if mark:  # litellm quotes a whole traceback for a body it cannot parse: keep what it says, and the cause
        cause = next((line for line in tb.splitlines() if re.match(r"[\w.]+(Error|Exception)\b", line)), "")
        raw = head.strip() + (f" ({cause.strip()})" if cause else "")
    text = " ".join(raw.split())
    text = re.sub(r"^(?:litellm\.\w+: |\w+Error: )+", "", text)  # litellm repeats the class name, twice
    return f"{type(exc).__name__}: {text[:300]}"


def complete(model: str, messages: list[dict], tools: list[dict], *, thinking: bool = False,
             timeout: float = 600.0, attempts: int = 6, backoff: float = 2.0, api_base: Optional[str] = None,
             max_tokens: Optional[int] = DEFAULT_MAX_TOKENS,
             sleep: Optional[Callable[[float], None]] = None) -> Reply:
    """One model turn. Transient errors (rate limits, connection, timeouts, 5xx, a 200 without a
    choice, a body that is not JSON) are retried with exponential backoff and jitter (at least the
    server's Retry-After, at most MAX_WAIT); anything else raises ModelError at once. The SDK's own
    retries are off (max_retries=0): `attempts` is the number of requests, counted once and recorded."""
    if is_scripted(model):
        from . import scripted
        scripted.register()
    kwargs = {"model": model, "messages": messages, "tools": tools, "timeout": timeout, "max_retries": 0}
    if max_tokens:
        kwargs["max_tokens"] = max_tokens
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
            with warnings.catch_warnings():  # pydantic grumbles at arguments sent as an object; we fix them below
                warnings.simplefilter("ignore")
                response = litellm.completion(**kwargs)
            if not getattr(response, "choices", None):
                raise _EmptyReply("the server answered 200 with no choices")
            break
        except (*TRANSIENT, _EmptyReply) as exc:
            retried.append(_describe(exc, timeout))
            if attempt == attempts - 1:
                raise ModelError(f"{_describe(exc, timeout)} (after {attempts} attempts)", retried) from None
            wait = min(backoff * 2 ** attempt, MAX_WAIT) * (0.5 + random.random() / 2)
            sleep(min(max(wait, _retry_after(exc) or 0.0), MAX_WAIT))
        except Exception as exc:  # authentication, a bad request, and what litellm raises beyond its own types
            raise ModelError(_describe(exc, timeout), retried) from None
    seconds = time.monotonic() - t0
    first = response.choices[0]
    choice = first.message
    calls = [{"id": c.id or "", "name": (c.function.name or "") if c.function else "",
              "arguments": _arguments_text(c.function.arguments if c.function else None)}
             for c in (choice.tool_calls or [])]
    usage = getattr(response, "usage", None)
    details = getattr(usage, "completion_tokens_details", None)
    reply = Reply(content=choice.content or "", tool_calls=calls,
                  reasoning=getattr(choice, "reasoning_content", None) or "",
                  tokens_in=getattr(usage, "prompt_tokens", 0) or 0,
                  tokens_out=getattr(usage, "completion_tokens", 0) or 0,
                  tokens_reasoning=getattr(details, "reasoning_tokens", 0) or 0,
                  seconds=seconds, retries=retried, finish_reason=getattr(first, "finish_reason", None))
    if is_scripted(model):
        reply.cost = 0.0
    else:
        try:
            reply.cost = float(litellm.completion_cost(completion_response=response))
        except Exception:
            reply.cost = None  # a model litellm has no price for (a local server)
    return reply


def _arguments_text(args) -> str:
    """A call's arguments as text: servers that send an object instead of a JSON string get it encoded."""
    if args is None or args == "":
        return "{}"
    if isinstance(args, str):
        return args
    import json
    return json.dumps(args, ensure_ascii=False)
