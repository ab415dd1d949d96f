"""kcgen.redact, the one redaction function for everything written: property tests (hypothesis)
over secret environment values and their encodings, token prefixes in any case and URL userinfo,
and the places it is applied (trajectory, bench.json, the results database)."""
from __future__ import annotations

import base64
import json
import sqlite3
from urllib.parse import quote

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kcgen.redact import MARK, redact, secret_values

TOKEN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=.~"
secret = st.text(alphabet=TOKEN_CHARS, min_size=8, max_size=48)
prose = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60)
NAMES = ["AWS_SECRET_ACCESS_KEY", "AZURE_OPENAI_KEY", "GROQ_KEY", "DB_PASSWD", "SMTP_PASSWORD", "HF_TOKEN",
         "GOOGLE_APPLICATION_CREDENTIALS", "my_api_key", "SecretThing"]


def encodings(value: str) -> list[str]:
    raw = value.encode()
    return [value, base64.b64encode(raw).decode(), base64.b64encode(raw).decode().rstrip("="),
            base64.urlsafe_b64encode(raw).decode(), raw.hex(), raw.hex().upper(), quote(value, safe="")]


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(NAMES), value=secret, before=prose, after=prose, which=st.integers(0, 6))
def test_secret_environment_values_and_their_encodings_never_survive(name, value, before, after, which):
    assume(value not in MARK)
    form = encodings(value)[which]
    out = redact({"note": f"{before} {form} {after}", "nested": [form]}, secret_values({name: value}))
    text = json.dumps(out)
    for enc in encodings(value):
        if len(enc) >= 8:
            assert enc not in out["note"] and enc not in out["nested"][0], (enc, out)
    assert MARK in text


@settings(max_examples=150, deadline=None)
@given(prefix=st.sampled_from(["sk-", "sk-proj-", "sk-ant-", "gsk_", "ghp_", "gho_", "github_pat_", "glpat-", "hf_",
                               "xoxb-"]),
       body=st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", min_size=20,
                    max_size=40),
       upper=st.booleans(), before=prose)
def test_known_token_prefixes_in_any_case_are_redacted(prefix, body, upper, before):
    token = (prefix + body).upper() if upper else prefix + body
    out = redact(f"{before} {token} end", [])
    assert token not in out and out.endswith(f"{MARK} end")


@settings(max_examples=100, deadline=None)
@given(user=st.text(alphabet="abcdefghij", min_size=1, max_size=8),
       password=st.text(alphabet=TOKEN_CHARS.replace("/", "") + "!$&'()*+,;=%", min_size=8, max_size=40),  # RFC 3986
       host=st.sampled_from(["127.0.0.1:8000", "example.org", "proxy.local"]))
def test_passwords_in_urls_are_redacted(user, password, host):
    assume(password not in MARK and password not in user and password not in host)
    url = f"http://{user}:{password}@{host}/v1"
    out = redact({"api_base": url, "error": f"cannot connect to {url}"}, [])
    assert password not in json.dumps(out) and out["api_base"] == f"http://{user}:{MARK}@{host}/v1"


def test_ordinary_text_and_numbers_are_left_alone():
    kernel = "    vsetvli t0, a2, e32, m1\n    vle32.v v1, (a0)\n    basic block; token budget 15\n"
    rec = {"type": "summary", "tokens_in": 1200, "tokens_out": 80, "error": None, "code": kernel,
           "url": "http://127.0.0.1:8000/v1"}
    assert redact(rec, []) == rec
    assert redact({"api_key": "anything", "Authorization": "Bearer x"}, []) == {"api_key": MARK, "Authorization": MARK}


def test_the_findings_secrets_never_reach_a_trajectory(tmp_path, monkeypatch):
    """A run through a scripted HTTP server whose replies quote every secret of the finding."""
    from kcgen.paths import agent

    from .fakeserver import FakeServer, reply
    A = agent()
    env = {"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AZURE_OPENAI_KEY": "0123456789abcdef0123",
           "GROQ_KEY": "groq-secret-value-42", "PG_PASSWD": "correct-horse-battery", "OPENAI_API_KEY": "sk-local-123456789"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    leaks = list(env.values()) + [base64.b64encode(env["GROQ_KEY"].encode()).decode(),
                                  "gsk_abcdefghijklmnopqrstuvwx", "ghp_abcdefghijklmnopqrstuvwx0123",
                                  "SK-ABCDEFGHIJKLMNOPQRSTUVWX", "hunter2hunter2"]
    said = " ".join(leaks[:-1]) + " see https://bob:hunter2hunter2@example.org/x"
    with FakeServer([reply(said, reasoning=said, calls=[("grep_docs", {"pattern": leaks[0]})]), reply(said)]) as srv:
        summary = A.run(A.RunSettings(model="openai/m", target="boom", task="relu", out=tmp_path / "run",
                                      api_base=srv.url.replace("http://", "http://bob:hunter2hunter2@"),
                                      backoff=0.01, attempts=2, timeout=5))
    assert summary["turns"] == 2
    text = (tmp_path / "run" / "trajectory.jsonl").read_text()
    assert not [s for s in leaks if s in text] and text.count(MARK) >= 10


def test_bench_json_and_the_database_are_redacted(tmp_path, monkeypatch):
    from kcgen import bench
    monkeypatch.setenv("MY_SERVER_TOKEN", "tok-1234567890-secret")
    bench.run([], tmp_path, bench.Options(api_base="http://me:pa55word-xyz@127.0.0.1:9/v1"))
    saved = (tmp_path / "bench.json").read_text()
    assert "pa55word-xyz" not in saved and f"me:{MARK}@127.0.0.1" in saved
    db = bench.connect(tmp_path)
    bench.write_row(db, {"model": "openai/m", "target": "boom", "task": "relu", "config": "C1", "trial": 1,
                         "status": "error", "error": "AuthenticationError: bad key tok-1234567890-secret"})
    db.close()
    rows = sqlite3.connect(tmp_path / "results.sqlite").execute("SELECT error FROM runs").fetchall()
    assert rows == [(f"AuthenticationError: bad key {MARK}",)]
