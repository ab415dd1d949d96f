"""One redaction function for everything KernelCraft writes (trajectories, bench.json, the results
database, what the CLI prints): secrets never reach a file or a log.

    redact({"error": "401 for key sk-…", "api_base": "http://user:pw@host"})

What is replaced by [REDACTED]:
- the value of every environment variable whose name says it holds a secret (KEY, TOKEN, SECRET,
  PASSWORD, PASSWD, CREDENTIAL anywhere in the name, any case), and its base64 (standard and URL-safe,
  with or without padding), hex and percent-encoded forms; values shorter than 8 characters are left
  alone (they would erase ordinary words, and are no secret worth the name);
- strings that look like tokens, with a known prefix in any case (sk-, gsk_, ghp_/gho_/ghu_/ghs_/ghr_,
  github_pat_, glpat-, hf_, xoxb-…, AIza…, AKIA/ASIA…) or after "Bearer"/"Basic", or after
  api_key= / password: and the like;
- the password (or a lone token) in a URL's userinfo: scheme://user:[REDACTED]@host;
- the value of a mapping key that names a secret (api_key, authorization, password, token, …).
Stdlib only: every layer may use it.
"""
from __future__ import annotations

import base64
import os
import re
from urllib.parse import quote

MARK = "[REDACTED]"
MIN_SECRET = 8
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.I)
_SECRET_FIELD = re.compile(r"^(?:.*[_\-])?(?:api[_\-]?key|apikey|authorization|password|passwd|secret|token|"
                           r"access[_\-]?token|refresh[_\-]?token|credentials?)$", re.I)
_TOKENS = re.compile(
    r"(?i)(?<![A-Za-z0-9])(?:"
    r"sk-[A-Za-z0-9_\-]{16,}|gsk_[A-Za-z0-9]{16,}|gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}|"
    r"glpat-[A-Za-z0-9_\-]{16,}|hf_[A-Za-z0-9]{16,}|xox[abprs]-[A-Za-z0-9\-]{10,}|AIza[0-9A-Za-z_\-]{30,}|"
    r"(?:AKIA|ASIA)[0-9A-Z]{16}"
    r")")
_AFTER = [  # a label, then the secret that follows it
    re.compile(r"(?i)\b(bearer\s+)([A-Za-z0-9+/=._~\-]{16,})"),
    re.compile(r"(?i)\b(authorization[\"']?\s*[:=]\s*[\"']?(?:basic\s+|bearer\s+)?)([A-Za-z0-9+/=._~\-]{8,})"),
    re.compile(r"(?i)\b((?:api[_\-]?key|apikey|password|passwd|secret|access[_\-]?token|token)[\"']?\s*[=:]\s*[\"']?)"
               r"([^\s\"',;&]{8,})")]
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^\s/@:]*)(:[^\s/@]*)?@")


def secret_values(environ=None) -> list[str]:
    """Every form of every secret environment value, longest first (so a longer form is replaced
    before a shorter one that it contains)."""
    env = os.environ if environ is None else environ
    forms: set[str] = set()
    for name, value in env.items():
        if not _SECRET_NAME.search(name) or len(value) < MIN_SECRET:
            continue
        raw = value.encode("utf-8", "surrogatepass")
        b64 = base64.b64encode(raw).decode()
        url64 = base64.urlsafe_b64encode(raw).decode()
        forms |= {value, b64, b64.rstrip("="), url64, url64.rstrip("="), raw.hex(), raw.hex().upper(),
                  quote(value, safe="")}
    return sorted((f for f in forms if len(f) >= MIN_SECRET), key=len, reverse=True)


def _userinfo(m: re.Match) -> str:
    user, password = m.group(2), m.group(3)
    if password is not None:
        return f"{m.group(1)}{user}:{MARK}@"
    return f"{m.group(1)}{MARK}@" if len(user) >= MIN_SECRET else m.group(0)  # a token as the user name


def redact_text(text: str, secrets: list[str] | None = None) -> str:
    secrets = secret_values() if secrets is None else secrets
    for s in secrets:
        if s in text:
            text = text.replace(s, MARK)
    text = _TOKENS.sub(MARK, text)
    for pattern in _AFTER:
        text = pattern.sub(lambda m: m.group(1) + MARK, text)
    return _USERINFO.sub(_userinfo, text)


def redact(value, secrets: list[str] | None = None):
    """`value` (a string or any JSON-able structure) with every secret replaced by [REDACTED]."""
    secrets = secret_values() if secrets is None else secrets
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, dict):
        return {k: (MARK if isinstance(k, str) and _SECRET_FIELD.match(k) and value[k] not in (None, "") else
                    redact(v, secrets)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v, secrets) for v in value]
    return value
