"""The review page's templates: Jinja2 with autoescape on for every template, inline
CSS, no script and no external asset (the page works offline). Memory text is data:
it only ever reaches the page through ``{{ }}``, escaped."""

from __future__ import annotations

from jinja2 import DictLoader, Environment, StrictUndefined

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d232a;background:#f6f7f9}
header{background:#22303c;color:#fff;padding:.6em 1.2em;display:flex;gap:1.4em;align-items:center}
header a{color:#cfe3f5;text-decoration:none}header a.on{color:#fff;font-weight:600}
header b{font-size:1.1em;margin-right:1em}
main{padding:1em 1.4em;max-width:1200px}
h2{font-size:1.15em;margin:1.2em 0 .4em}
table{border-collapse:collapse;width:100%;background:#fff}
td,th{border-bottom:1px solid #e3e6ea;padding:.35em .5em;text-align:left;vertical-align:top}
th{font-weight:600;background:#eef1f4}
.badge{display:inline-block;padding:0 .45em;border-radius:.6em;font-size:.8em;color:#fff}
.owner{background:#2c7a4b}.agent{background:#2f6db3}.untrusted{background:#b3412f}
.system{background:#6b6f76}.none{background:#999}
.pass{color:#2c7a4b}.fail{color:#b3412f;font-weight:600}
.frame{border:2px dashed #b3412f;padding:.4em;background:#fff5f3}
.frame .label{color:#b3412f;font-size:.8em;font-weight:600}
.diff{font-family:ui-monospace,monospace;white-space:pre-wrap;background:#fff;padding:.5em}
.add{background:#e6f5ea}.del{background:#fbe9e7}
form.inline{display:inline}button{cursor:pointer}
.flash{background:#fff8d6;border:1px solid #e8d47a;padding:.4em .8em;margin-bottom:1em}
.muted{color:#6b6f76}code{font-size:.92em}
"""

BASE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'">
<title>Reverie review · {{ title }}</title><style>{{ css }}</style></head><body>
<header><b>Reverie review</b>
{% for href, label in nav %}<a href="{{ href }}" class="{{ 'on' if href == here else '' }}">{{ label }}</a>{% endfor %}
</header><main>
{% if flash %}<div class="flash" role="status">{{ flash }}</div>{% endif %}
{% block body %}{% endblock %}
</main></body></html>"""

FORM = """{% macro post(action, label, fields, confirm=False) -%}
<form class="inline" method="post" action="{{ action }}">
<input type="hidden" name="csrf" value="{{ csrf }}">
{% for k, v in fields.items() %}<input type="hidden" name="{{ k }}" value="{{ v }}">{% endfor %}
{% if 'back' not in fields %}<input type="hidden" name="back" value="{{ back_here }}">{% endif %}
<button type="submit" name="do" value="{{ label }}">{{ label }}</button></form>
{%- endmacro %}
{% macro pager(p, path, noun) -%}{% if p.pages > 1 %}<p class="muted pager">{{ p.total }} {{ noun }} · page {{ p.page }} of {{ p.pages }}
{% if p.page > 1 %}<a rel="prev" href="{{ path }}?page={{ p.page - 1 }}">previous</a>{% endif %}
{% if p.page < p.pages %}<a rel="next" href="{{ path }}?page={{ p.page + 1 }}">next</a>{% endif %}</p>{% endif %}{%- endmacro %}
{% macro badge(origin) -%}<span class="badge {{ origin or 'none' }}">{{ origin or '?' }}</span>{%- endmacro %}"""

MEMORY = """{% extends "base" %}{% from "form" import post with context %}{% block body %}
{% if conflicts %}<h2>Sync conflicts</h2><p class="muted">one entry was edited on two devices; both versions are in the file until you pick one</p>
<table>{% for c in conflicts %}{% set cid = c.split(': ')[1] %}<tr><td>{{ c }}</td>
<td>{{ post('/sync/pick', 'keep version 1', {'id': cid, 'version': '1', 'back': here}) }} {{ post('/sync/pick', 'keep version 2', {'id': cid, 'version': '2', 'back': here}) }}</td></tr>{% endfor %}</table>{% endif %}
{% for f in files %}<h2>{{ f.name }}</h2>
<table><tr><th>#</th><th>entry</th><th>importance</th><th>triggers</th><th>project</th>
<th>observed</th><th>status</th><th></th></tr>
{% for e in f.entries %}<tr><td>{{ e.line }}</td><td>{{ e.text }}{% if e.source %}<br><span class="muted">source {{ e.source }}</span>{% endif %}</td>
<td>{{ e.importance if e.importance is not none else '' }}</td><td>{{ e.triggers|join(', ') }}</td>
<td>{{ e.projects|join(', ') }}</td><td>{{ e.observed or '' }}</td><td>{{ e.status }}</td>
<td>{{ post('/forget', 'forget', {'key': e.key, 'back': here}) }}</td></tr>
{% else %}<tr><td colspan="8" class="muted">no entries</td></tr>{% endfor %}</table>{% endfor %}
<h2>Trusted folders</h2><p>{% for t in trusted %}<code>{{ t }}</code> {% else %}<span class="muted">none: notes outside the fixed paths read as untrusted (<code>reverie trust PATH</code> at the CLI changes that)</span>{% endfor %}</p>
{% endblock %}"""

FILES = """{% extends "base" %}{% block body %}<h2>Journals, session corpus, imports, notes</h2>
<form method="get" action="/files"><input name="q" value="{{ list.q }}" size="30" aria-label="filter by path" placeholder="part of the path">
<select name="kind" aria-label="kind"><option value="">every kind</option>{% for k in list.kinds %}<option value="{{ k }}"{{ ' selected' if k == list.kind else '' }}>{{ k }}</option>{% endfor %}</select>
<button>filter</button></form>
<p class="muted pager">{{ list.total }} file(s) · page {{ list.page }} of {{ list.pages }}
{% if list.page > 1 %}<a rel="prev" href="/files?{{ {'q': list.q, 'kind': list.kind, 'page': list.page - 1}|urlencode }}">previous</a>{% endif %}
{% if list.page < list.pages %}<a rel="next" href="/files?{{ {'q': list.q, 'kind': list.kind, 'page': list.page + 1}|urlencode }}">next</a>{% endif %}</p>
<table><tr><th>file</th><th>kind</th></tr>{% for f in list.files %}
<tr><td><a href="/file?path={{ f.path|urlencode }}">{{ f.path }}</a></td><td>{{ f.kind }}</td></tr>
{% else %}<tr><td colspan="2" class="muted">no files</td></tr>{% endfor %}</table>{% endblock %}"""

LINES = """{% extends "base" %}{% from "form" import post, badge with context %}{% block body %}
<h2>Lines of the journals, corpus, imports and notes</h2>
<form method="get" action="/lines"><select name="origin" aria-label="origin"><option value="">every origin</option>{% for o in list.origins %}<option value="{{ o }}"{{ ' selected' if o == list.origin else '' }}>{{ o }}</option>{% endfor %}</select>
<input name="q" value="{{ list.q }}" size="24" aria-label="filter by text" placeholder="part of the text">
<input name="path" value="{{ list.path }}" size="18" aria-label="filter by file" placeholder="part of the file">
<input name="day" value="{{ list.day }}" size="10" aria-label="filter by day" placeholder="2026-03">
<button>filter</button></form>
{% set keep = {'origin': list.origin, 'q': list.q, 'path': list.path, 'day': list.day, 'per': list.per} %}
<p class="muted pager">{{ list.total }} line(s) · page {{ list.page }} of {{ list.pages }}
{% if list.page > 1 %}<a rel="prev" href="/lines?{{ dict(keep, page=list.page - 1)|urlencode }}">previous</a>{% endif %}
{% if list.page < list.pages %}<a rel="next" href="/lines?{{ dict(keep, page=list.page + 1)|urlencode }}">next</a>{% endif %}</p>
<table><tr><th>file</th><th>#</th><th>origin</th><th>line</th><th></th></tr>
{% for ln in list.lines %}<tr><td><a href="/file?path={{ ln.path|urlencode }}">{{ ln.path }}</a></td><td>{{ ln.number }}</td>
<td>{{ badge(ln.origin) }}</td><td class="line">{{ ln.text }}</td>
<td>{{ post('/forget', 'forget', {'key': ln.key, 'back': back_here}) }}</td></tr>
{% else %}<tr><td colspan="5" class="muted">no lines</td></tr>{% endfor %}</table>{% endblock %}"""

CONFIRM = """{% extends "base" %}{% from "form" import post with context %}{% block body %}
<h2 class="confirm">{{ step.question }}</h2>
<div class="diff">{% for c in step.changes %}<div class="{{ 'add' if c.sign == '+' else ('del' if c.sign == '-' else '') }}">{{ c.sign }} {{ c.text }} <span class="muted">{{ c.where }}</span></div>{% else %}<span class="muted">nothing would change</span>{% endfor %}</div>
<p>{{ post(step.action, 'yes, ' ~ step.verb, step.fields) }} <a href="{{ step.fields.back or '/' }}">cancel</a></p>
{% endblock %}"""

FILE = """{% extends "base" %}{% from "form" import post, badge with context %}{% block body %}
<h2>{{ data.path }} <span class="muted">({{ data.kind }})</span></h2>
<table><tr><th>#</th><th>origin</th><th>session</th><th>line</th><th></th></tr>
{% for ln in data.lines %}<tr><td>{{ ln.number }}</td><td>{{ badge(ln.origin) }}</td>
<td>{{ ln.session or '' }}</td><td class="line">{{ ln.text }}</td>
<td>{{ post('/forget', 'forget', {'key': ln.key, 'back': here}) }}</td></tr>{% endfor %}</table>{% endblock %}"""

DREAM = """{% extends "base" %}{% from "form" import post, badge, pager with context %}{% block body %}
<h2>Candidate pool</h2><p class="muted">Tonight's candidates: open one for its signals and gates. Promote is offered only where no gate the owner cannot waive failed.</p>
{{ pager(paging, '/dream', 'candidate(s)') }}{% for c in data.candidates %}<details class="cand"><summary>{{ badge(c.origin) }} {{ c.snippet|truncate(90) }} <span class="muted">{{ c.source }}</span> · score {{ c.score }} · <span class="{{ 'pass' if c.decision == 'promote' else 'fail' }}">{{ c.decision }}</span>: {{ c.reason }}</summary>
<table><tr><th colspan="2">{{ c.session_kind or '' }}
<span style="float:right">{% if c.may_promote %}{{ post('/dream/promote', 'promote', {'key': c.key}) }} {% endif %}{{ post('/dream/reject', 'reject', {'key': c.key}) }}</span></th></tr>
<tr><td colspan="2">{{ c.snippet }}</td></tr>
<tr><td style="width:50%">{% for k, v in c.signals.items() %}signal {{ k }}: {{ v }}<br>{% endfor %}</td>
<td>{% for g in c.gates %}<span class="{{ 'pass' if g.passed else 'fail' }}">gate {{ g.name }}: {{ 'pass' if g.passed else 'FAIL' }}</span> {{ g.reason }}<br>{% endfor %}</td></tr></table></details>
{% else %}<p class="muted">no candidates: nothing has been recalled from the journals yet</p>{% endfor %}
{% if data.dropped %}<h2>Dropped</h2><table>{% for d in data.dropped %}<tr><td>{{ d.key }}</td><td>{{ d.reason }}</td></tr>{% endfor %}</table>{% endif %}
{% endblock %}"""

NIGHT = """{% extends "base" %}{% block body %}<h2>What dreaming did last</h2>
<p>Dreaming is <b>{{ 'on' if data.enabled else 'off' }}</b> ({{ data.schedule_in_words }}, <code>{{ data.schedule }}</code>){% if data.last_run %}; it last ran at {{ data.last_run }}{% else %}; it has not run yet{% endif %}. {{ data.promoted }} line(s) promoted so far.</p>
{% if data.heading %}<h2>{{ data.heading }}</h2><ul class="night">{% for i in data.said %}<li>{{ i }}</li>{% endfor %}</ul>{% endif %}
{% if data.phases %}<h2>That night, phase by phase</h2><ul class="phases">{% for p in data.phases %}<li>{{ p }}</li>{% endfor %}</ul>{% endif %}
{% if not data.heading and not data.phases %}<p class="muted">nothing written yet: DREAMS.md gets an entry each night dreaming changes MEMORY.md</p>{% endif %}
{% endblock %}"""

HISTORY = """{% extends "base" %}{% from "form" import post, pager with context %}{% block body %}
<h2>MEMORY.md history</h2>{{ pager(paging, '/history', 'pre-image(s)') }}{% for p in images %}
<h3>{{ p.name }} {{ post('/history/restore', 'restore', {'name': p.name}) }}</h3>
<div class="diff">{% for d in p.diff %}<div class="{{ 'add' if d.sign == '+' else ('del' if d.sign == '-' else '') }}">{{ d.sign }} {{ d.text }}</div>{% else %}<span class="muted">same as the current file</span>{% endfor %}</div>
{% else %}<p class="muted">no pre-images yet</p>{% endfor %}{% endblock %}"""

PENDING = """{% extends "base" %}{% from "form" import post, pager with context %}{% block body %}
<h2>Agent requests</h2><p class="muted">An agent can only ask; nothing changes until you confirm.</p>
{{ pager(paging, '/pending', 'request(s)') }}
<table><tr><th>id</th><th>kind</th><th>asked</th><th>text</th><th>new text</th><th></th></tr>
{% for r, changes in requests %}<tr><td>{{ r.id }}</td><td>{{ r.kind }}</td><td>{{ r.at }}<br><span class="muted">{{ r.by }}</span></td>
<td>{{ r.text }}{% if r.reason %}<br><span class="muted">{{ r.reason }}</span>{% endif %}</td><td>{{ r.new_text or '' }}</td>
<td>{{ post('/pending/confirm', 'confirm', {'id': r.id}) }} {{ post('/pending/reject', 'reject', {'id': r.id}) }}</td></tr>
{% if changes %}<tr><td colspan="6"><div class="diff">{% for c in changes %}<div class="muted">{{ c.path }}:{{ c.line }}</div>{% if c.span %}<div class="span">{{ c.span.before }}<del class="del">{{ c.span.gone }}</del><ins class="add">{{ c.span.came }}</ins>{{ c.span.after }}</div>{% else %}<div class="del">- {{ c.old }}</div>{% endif %}{% endfor %}</div></td></tr>{% endif %}
{% else %}<tr><td colspan="6" class="muted">no pending requests</td></tr>{% endfor %}</table>{% endblock %}"""

INTENTS = """{% extends "base" %}{% from "form" import post, pager with context %}{% block body %}
<h2>Standing intents</h2><p class="muted">A pending intent was proposed by an agent: it never fires until you confirm it.</p>
{{ pager(paging, '/intents', 'intent(s)') }}
<table><tr><th>id</th><th>status</th><th>kind</th><th>when</th><th>text</th><th>fired</th><th>proposed by</th><th></th></tr>
{% for i in intents %}<tr><td>{{ i.id }}</td><td>{{ i.status }}</td><td>{{ i.kind }}</td><td>{{ i.when }}</td>
<td>{{ i.text }}</td><td>{{ i.fired }}</td><td>{{ i.proposed_by }}</td>
<td>{% if i.status == 'pending' %}{{ post('/intents/confirm', 'confirm', {'id': i.id}) }} {% endif %}{% if i.status in ('pending', 'armed') %}{{ post('/intents/cancel', 'cancel', {'id': i.id}) }}{% endif %}</td></tr>
{% else %}<tr><td colspan="8" class="muted">no standing intents</td></tr>{% endfor %}</table>{% endblock %}"""

SEARCH = """{% extends "base" %}{% from "form" import badge with context %}{% block body %}
<form method="get" action="/search"><input name="q" value="{{ q }}" size="60" aria-label="query"> <button>search</button></form>
{% set linkable = hits | map(attribute='lines') | map('length') | sum %}{% if linkable > 1 %}<form method="post" action="/link">
<input type="hidden" name="csrf" value="{{ csrf }}"><input type="hidden" name="back" value="{{ back_here }}">{% endif %}
{% for h in hits %}<h3>{{ h.source }} {{ badge(h.origin) }} <span class="muted">{{ h.kind }} · score {{ h.score }}</span></h3>
{% if h.untrusted %}<div class="frame"><div class="label">UNTRUSTED CONTENT: external text, data only</div><div class="snippet">{{ h.snippet }}</div></div>
{% elif h.lines and linkable > 1 %}<div class="snippet">{% for ln in h.lines %}<div class="line"><label><input type="radio" name="newer" value="{{ ln.anchor }}"> newer</label> <label><input type="radio" name="older" value="{{ ln.anchor }}"> older</label> {{ ln.text }}</div>{% endfor %}</div>
{% else %}<div class="snippet">{{ h.snippet }}</div>{% endif %}
<ul class="why">{% for w in h.why %}<li>{{ w }}</li>{% endfor %}</ul>
<details class="muted"><summary>the numbers</summary>{% for k, v in h.explain.items() %}{{ k }}={{ v }} {% endfor %}</details>
{% else %}{% if q %}<p class="muted">no hits</p>{% endif %}{% endfor %}
{% if linkable > 1 %}<p><button type="submit" name="do" value="link">this replaces that</button> <span class="muted">the line marked newer replaces the one marked older: both stay, and search shows the newer first</span></p></form>{% endif %}{% endblock %}"""

ENV = Environment(
    loader=DictLoader(
        {
            "base": BASE,
            "form": FORM,
            "memory": MEMORY,
            "files": FILES,
            "file": FILE,
            "lines": LINES,
            "dream": DREAM,
            "night": NIGHT,
            "history": HISTORY,
            "pending": PENDING,
            "intents": INTENTS,
            "search": SEARCH,
            "confirm": CONFIRM,
        }
    ),
    autoescape=True,  # every template, whatever its name: memory text is never markup
    undefined=StrictUndefined,
)

__all__ = ["CSS", "ENV"]
