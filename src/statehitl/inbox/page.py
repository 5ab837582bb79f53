"""The inbox web page as HTML strings: pure functions, every user-provided value escaped.

Reasons, names, thread ids and answers come from whatever the application stored, so each goes through
``html.escape`` (quotes too, for attributes) before it reaches the page: a reason holding ``<script>``
shows as text. A form for the response is built from the interrupt's JSON schema when it has one (an
object of simple fields, or an enum), else a JSON box; ``form_response`` turns a posted form back into
the response with the same schema.

A choice (an enum: ``Literal["approve", "deny"]``) is a set of radio buttons none of which is checked, so
no answer is ever the default: a click that lands on the page by accident (or by a framing page's
trick) answers nothing, and the page's one script keeps each form's button disabled until the form is
complete. The page owns its only script and stylesheet, so it also owns the policy that lets exactly
those two run (``CONTENT_SECURITY_POLICY``, their hashes): nothing else the page might be made to hold
can run, and no other site may frame it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Mapping
from html import escape
from typing import Any
from urllib.parse import quote

from statehitl._text import when_text
from statehitl.inbox.audit import AuditRow
from statehitl.inbox.identity import ANONYMOUS, Identity
from statehitl.inbox.listing import PendingInterrupt, UnappliedAnswer
from statehitl.inbox.text import age_text, expiry_text, parse_response
from statehitl.responders import describe, may_answer

_STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#1d2330}
h1{font-size:1.4rem}h1 small{font-weight:normal;color:#667}
.item{border:1px solid #d5d9e2;border-radius:8px;padding:.8rem 1rem;margin:1rem 0;background:#fbfcfe}
.meta{color:#556;font-size:.9rem}.name{font-weight:600}.expired{color:#b42318}
pre{background:#eef1f6;padding:.5rem;border-radius:6px;white-space:pre-wrap;word-break:break-word}
textarea{width:100%;font-family:ui-monospace,monospace}label{display:block;margin:.3rem 0}
button{padding:.35rem 1rem;border-radius:6px;border:1px solid #345;background:#2f5bd3;color:white;cursor:pointer}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #e3e6ec;padding:.3rem;text-align:left;
vertical-align:top}.notice{padding:.6rem 1rem;border-radius:6px;background:#ecfdf3;border:1px solid #abefc6}
.notice.error{background:#fef3f2;border-color:#fecdca}.not-allowed{color:#556;font-style:italic}
fieldset{border:0;padding:0;margin:.3rem 0}label.choice{display:inline-block;margin:.2rem 1.2rem .2rem 0}
button:disabled{background:#9aa7c7;border-color:#9aa7c7;cursor:not-allowed}
"""

_SCRIPT = """
for (const form of document.querySelectorAll("form")) {
  const button = form.querySelector("button[type=submit]");
  const update = () => { button.disabled = !form.checkValidity(); };
  form.addEventListener("input", update);
  form.addEventListener("change", update);
  update();
}
"""
"""Each form's button stays disabled until the form is complete (a choice picked, the required fields
filled). Without the script the radios' ``required`` still stops an incomplete form, and the server
refuses a choice that is missing or not one of the offered values."""

RESPONDER_FIELD = "__responder"
"""The "Your name" box of a page that does not know who reads it: a label for the trail, never proof."""

CSRF_FIELD = "__csrf"
"""The hidden field of every answer form: the server's per-process value, which only a page read from
the inbox itself can know (another origin cannot read the page), checked on every form post."""


def _hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; script-src {_hash(_SCRIPT)}; style-src {_hash(_STYLE)}; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
"""What the page may load and who may frame it: its own inline stylesheet and script (by hash, so an
injected one does not run), forms posted only to the inbox itself, and no frame at all."""


def _page(title: str, body: str) -> str:
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<style>{_STYLE}</style></head><body>{body}<script>{_SCRIPT}</script></body></html>")


def _json(value: Any) -> str:
    return escape(json.dumps(value, indent=2, ensure_ascii=False, default=repr))


def _reason(value: Any) -> str:
    """A reason as a person reads it: a text as its lines (a prompt such as HumanInTheLoop's), else JSON."""
    return escape(value) if isinstance(value, str) else _json(value)


def list_page(items: list[PendingInterrupt], store: str, *, resumes: bool, csrf: str,
              identity: Identity = ANONYMOUS, now: float | None = None,
              unapplied: list[UnappliedAnswer] | None = None, unreadable: Mapping[str, str] | None = None) -> str:
    """Every pending interrupt, newest first, each with its reason and a form to answer it; each form
    carries ``csrf`` (``CSRF_FIELD``), the value the server checks a post against. Below them, the
    ``unapplied`` answers: given, and not yet acted on (a worker or the app's next call applies them);
    then the threads whose index entry could not be read (``unreadable``), named, so that one damaged
    entry is seen and hides nothing else.

    ``identity`` is who the inbox's authentication says is reading: known, the forms answer as them and
    have no name box, and an interrupt they may not answer shows who may instead of a form. Unknown, a
    form asks for a name (a label for the trail), and an interrupt that names who may answer has no form:
    a typed name vouches for nobody."""
    moment = time.time() if now is None else now
    after = ("resumes the thread now" if resumes
             else "is stored; a worker (statehitl worker) or the app's next call applies it")
    cards = [_card(item, moment, csrf, identity) for item in items]
    body = "".join(cards) if cards else '<p id="empty">Nothing is waiting on a human.</p>'
    who = f' You answer as <span id="identity">{escape(identity.describe())}</span>.' if identity.known else ""
    return _page("statehitl inbox", f'<h1>statehitl inbox <small>{escape(store)}</small></h1>'
                 f'<p class="meta">{len(items)} pending, newest first. Answering {escape(after)}.{who}</p>{body}'
                 f'{_unapplied(unapplied or [], moment)}{_unreadable(unreadable or {})}')


def _unreadable(threads: Mapping[str, str]) -> str:
    if not threads:
        return ""
    rows = "".join(f'<li class="unreadable">thread {escape(t)}: {escape(why)}</li>'
                   for t, why in sorted(threads.items()))
    return f'<h2>Threads whose index entry cannot be read ({len(threads)})</h2><ul>{rows}</ul>'


def _unapplied(answers: list[UnappliedAnswer], now: float) -> str:
    if not answers:
        return ""
    rows = "".join(
        f'<li class="unapplied" data-id="{escape(a.id)}"><span class="name">{escape(a.name)}</span> on thread '
        f'<a href="thread/{quote(a.thread_id, safe="")}">{escape(a.thread_id)}</a>: answered by '
        f'{escape(a.responder or "nobody named")} ({escape(a.via)}), {escape(age_text(max(0.0, now - a.answered_at)))}'
        " ago</li>"
        for a in answers)
    return (f'<h2 id="unapplied">Answered, not yet applied ({len(answers)})</h2><p class="meta">A worker '
            "(statehitl worker) or the app's next call on the thread applies each.</p>"
            f"<ul>{rows}</ul>")


def _card(item: PendingInterrupt, now: float, csrf: str, identity: Identity) -> str:
    expiry = expiry_text(item.expires_at, now) if item.expires_at is not None else "no deadline"
    late = " expired" if item.expired(now) else ""
    default = "" if item.expires_at is None else f", then {escape(json.dumps(item.on_expire, default=repr))}"
    thread = quote(item.thread_id, safe="")
    allowed = ""
    if item.responders:
        allowed = f' · <span class="responders">may answer: {escape(describe(item.responders))}</span>'
    return (
        f'<div class="item" data-id="{escape(item.id)}">'
        f'<div><span class="name">{escape(item.name)}</span> '
        f'<span class="meta">thread <a href="thread/{thread}">{escape(item.thread_id)}</a> · '
        f'{escape(age_text(item.age(now)))} ago · <span class="{late.strip()}">expires: {escape(expiry)}{default}'
        f'</span>{allowed} · id {escape(item.id)}</span></div>'
        f'<pre class="reason">{_reason(item.reason)}</pre>{_answer_form(item, csrf, identity)}</div>'
    )


def _answer_form(item: PendingInterrupt, csrf: str, identity: Identity) -> str:
    """The form that answers ``item`` as ``identity``, or why there is none (the server checks again)."""
    if item.responders and not may_answer(item.responders, identity.name, identity.groups):
        why = (f"you, {escape(identity.describe())}, may not answer it" if identity.known else
               "this inbox does not know who you are (it is served without identities), and a typed name "
               "vouches for nobody")
        return f'<p class="not-allowed">Only {escape(describe(item.responders))} may answer; {why}.</p>'
    name = "" if identity.known else (f'<label>Your name <input name="{RESPONDER_FIELD}" autocomplete="name">'
                                      "</label>")
    return (f'<form method="post" action="answer/{quote(item.id, safe="")}">{_fields(item.response_schema)}'
            f'<input type="hidden" name="{CSRF_FIELD}" value="{escape(csrf)}">{name}'
            '<button type="submit">Answer</button></form>')


def _shape(schema: Mapping[str, Any] | None) -> tuple[list[Any] | None, dict[str, Any] | None]:
    """What a response form is built from: the schema's choices, or its object's fields (None: neither,
    a free JSON answer). The form and the reading of its post both follow it."""
    if schema and isinstance(schema.get("enum"), list):
        return schema["enum"], None
    properties = schema.get("properties") if schema and schema.get("type") == "object" else None
    return None, (properties if isinstance(properties, dict) and properties else None)


def _fields(schema: Mapping[str, Any] | None) -> str:
    """The inputs for a response with ``schema`` (None: any JSON)."""
    choices, properties = _shape(schema)
    if choices is not None:
        return _choices("Response", "response", choices, required=True)
    if properties is not None:
        required = set(schema.get("required", [])) if schema else set()
        return "".join(_field(name, spec if isinstance(spec, dict) else {}, name in required)
                       for name, spec in properties.items())
    return ('<label>Response (JSON; plain text such as y is taken as a string)'
            '<textarea name="response" rows="3" required></textarea></label>')


def _field(name: str, spec: Mapping[str, Any], required: bool) -> str:
    field = escape(f"field.{name}")
    title = escape(str(spec.get("title") or name))
    kind = spec.get("type")
    if isinstance(spec.get("enum"), list):
        return _choices(title, f"field.{name}", spec["enum"], required=required)
    if kind == "boolean":
        return f'<label><input type="checkbox" name="{field}" value="true"> {title}</label>'
    need = " required" if required else ""
    if kind in ("integer", "number"):
        step = "1" if kind == "integer" else "any"
        return f'<label>{title} <input type="number" step="{step}" name="{field}"{need}></label>'
    if kind == "string":
        return f'<label>{title} <input name="{field}"{need}></label>'
    return f'<label>{title} (JSON) <input name="{field}"{need}></label>'


def _choices(title: str, name: str, options: list[Any], *, required: bool) -> str:
    """One radio button per option, none checked: a ``<select>`` would show (and post) its first option,
    so an approval listed first would be the answer of a careless or tricked click. ``title`` is HTML
    (escaped by the caller)."""
    need = " required" if required else ""
    buttons = "".join(f'<label class="choice"><input type="radio" name="{escape(name)}" '
                      f'value="{escape(json.dumps(o))}"{need}> {escape(str(o))}</label>' for o in options)
    return f"<fieldset><legend>{title}</legend>{buttons}</fieldset>"


def _choice(name: str, raw: str | None, options: list[Any]) -> Any:
    """The option a posted choice names; ``ValueError`` when none was picked or the value is not one
    offered (compared as the JSON the form carried, so ``true`` is not taken for ``1``)."""
    offered = [json.dumps(o) for o in options]
    if raw is None or raw == "":
        raise ValueError(f"pick one of the choices for {name}: {', '.join(offered)}")
    if raw not in offered:
        raise ValueError(f"{raw} is not one of the choices for {name}: {', '.join(offered)}")
    return json.loads(raw)


def form_response(schema: Mapping[str, Any] | None, form: Mapping[str, str]) -> Any:
    """The response a posted form means, read with the same schema that built the form.

    ``ValueError`` naming the field for a value the schema's type cannot take (a number that is not one),
    or for a choice left unpicked (there is no default choice) or not among those offered.
    """
    choices, properties = _shape(schema)
    if choices is not None:
        return _choice("the response", form.get("response"), choices)
    if properties is None:
        if "response" not in form or not form["response"].strip():
            raise ValueError("the response is empty; type an answer (JSON, or plain text)")
        return parse_response(form["response"])
    answer: dict[str, Any] = {}
    for name, spec in properties.items():
        spec = spec if isinstance(spec, dict) else {}
        raw = form.get(f"field.{name}")
        kind = spec.get("type")
        if kind == "boolean" and not isinstance(spec.get("enum"), list):
            answer[name] = raw == "true"
        elif raw is None or raw == "":
            continue
        elif isinstance(spec.get("enum"), list):
            answer[name] = _choice(name, raw, spec["enum"])
        elif kind in ("integer", "number"):
            try:
                answer[name] = int(raw) if kind == "integer" else float(raw)
            except ValueError:
                raise ValueError(f"{name} must be {'an integer' if kind == 'integer' else 'a number'}, "
                                 f"got {raw!r}") from None
        elif kind == "string":
            answer[name] = raw
        else:
            answer[name] = parse_response(raw)
    return answer


def message_page(title: str, message: str, *, error: bool = False) -> str:
    """The page after an answer: what happened (``message`` is escaped), and the way back."""
    kind = "notice error" if error else "notice"
    return _page(title, f'<h1>{escape(title)}</h1><p class="{kind}" id="message">{escape(message)}</p>'
                        '<p><a href="../">Back to the inbox</a></p>')


def audit_page(thread_id: str, rows: list[AuditRow]) -> str:
    """The thread's audit trail: each answered interrupt, its reason, who answered what, when, and what
    it did; then those still waiting."""
    lines = "".join(
        f"<tr><td>{escape(when_text(r.at))}</td><td>{escape(r.name)}</td><td><pre>{_reason(r.reason)}</pre></td>"
        f"<td>{escape(r.outcome)}</td><td>{'' if r.outcome == 'pending' else _json(r.response)}</td>"
        f"<td>{escape(r.responder or '')}{' (expiry)' if r.via == 'expiry' else ''}</td>"
        f"<td>{escape(r.comment or '')}</td></tr>"
        for r in rows
    )
    header = ("<tr><th>When</th><th>Interrupt</th><th>Reason</th><th>Outcome</th><th>Answer</th><th>By</th>"
              "<th>Comment</th></tr>")
    table = f"<table>{header}{lines}</table>" if rows else "<p>This thread has no answered or waiting interrupts.</p>"
    return _page(f"thread {thread_id}", f"<h1>Thread {escape(thread_id)}</h1>{table}"
                 '<p><a href="../">Back to the inbox</a></p>')
