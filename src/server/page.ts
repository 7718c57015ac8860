/**
 * The web client at `/`: one self-contained page (no CDN, no build step, works offline) served by
 * `ase serve`. It signs in with the page cookie the printed URL set, lists and starts sessions,
 * streams one session's events (EventSource resumes with Last-Event-ID by itself, and the page
 * drops any seq it already has), and shows the inspector: the server-laid-out SVG statechart with
 * the active states highlighted live, the event and effect logs, and a scrubber over the durable log.
 * Sub-agent sessions sit indented under their parent; a session of a session tree shows the tree
 * with its focus (from the stream's `tree` frames) and moves it (enter / exit), and a focus moved
 * by someone else is a notice to follow, never a jump.
 * Everything the server sends is written with textContent, never as HTML.
 */

const CSS = String.raw`
*{box-sizing:border-box}[hidden]{display:none!important}body{margin:0;font:14px/1.4 system-ui,sans-serif;color:#1d2430;background:#f3f4f7}
header{display:flex;gap:8px;align-items:center;padding:8px 12px;background:#1f2a44;color:#fff;flex-wrap:wrap}
header h1{font-size:16px;margin:0 12px 0 0}header form{display:flex;gap:6px;flex-wrap:wrap;align-items:center}
input,select,textarea,button{font:inherit}input,select,textarea{padding:5px 7px;border:1px solid #b9bfcc;border-radius:6px;background:#fff;color:#1d2430}
button{padding:5px 10px;border:1px solid #8a93a6;border-radius:6px;background:#fff;cursor:pointer}button.primary{background:#2f6fed;color:#fff;border-color:#2f6fed}
button.allow{background:#1a7f37;color:#fff;border-color:#1a7f37}button.deny{background:#c62828;color:#fff;border-color:#c62828}
main{display:grid;grid-template-columns:220px minmax(0,1fr) minmax(0,1fr);gap:10px;padding:10px;height:calc(100vh - 52px)}
section{background:#fff;border:1px solid #dde1ea;border-radius:8px;padding:8px;overflow:auto;min-height:0}
h2{font-size:13px;text-transform:uppercase;letter-spacing:.04em;color:#5a6477;margin:2px 0 8px}
#sessions ul{list-style:none;margin:0;padding:0}#sessions li{padding:6px;border-radius:6px;cursor:pointer;border:1px solid transparent;word-break:break-all}
#sessions li.current{border-color:#2f6fed;background:#eef3ff}#sessions li small{display:block;color:#6a7385}
#sessions li.sub::before{content:"\21b3  ";color:#9aa3b5}
#tree{font-size:12px}#tree-nodes{display:flex;gap:4px;flex-wrap:wrap}#tree .node{padding:2px 6px;border:1px solid #dde1ea;border-radius:6px;background:#f6f7fa;cursor:pointer}
#tree .node.focus{border-color:#e0a100;background:#fff6db;font-weight:600}#tree .node.viewed{outline:2px solid #2f6fed}
#tree .node.completed{color:#9aa3b5}#tree button{padding:1px 6px;font-size:12px}
#focus-moved{margin:4px 0;padding:4px 8px;border:1px solid #e0a100;border-radius:6px;background:#fff6db;font-size:13px}
#chat{display:flex;flex-direction:column}#transcript{flex:1;overflow:auto;min-height:120px}
.entry{margin:4px 0;padding:6px 8px;border-radius:8px;background:#f6f7fa;white-space:pre-wrap;word-break:break-word}
.entry.user{background:#e7efff;margin-left:15%}.entry.assistant,.live-text{background:#f1f8ee;margin-right:10%}.live-text{opacity:.8;border:1px dashed #9cc59a}
.entry.tool{font-family:ui-monospace,monospace;font-size:12px;background:#fff8e6}.entry.meta{font-size:12px;color:#6a7385;background:none;padding:2px 8px}
.entry .seq{float:right;color:#9aa3b5;font-size:11px}.prompt{border:2px solid #e0a100;background:#fff6db;border-radius:8px;padding:8px;margin:6px 0}
.prompt pre{margin:4px 0;white-space:pre-wrap;font-size:12px}.bar{display:flex;gap:6px;align-items:center;flex-wrap:wrap;margin-top:6px}
#message{flex:1;min-width:160px;height:44px;resize:vertical}#status{font-size:12px;color:#5a6477}
#inspector{display:flex;flex-direction:column;gap:6px}#chart{overflow:auto;border:1px solid #e4e7ee;border-radius:6px;min-height:160px;background:#fcfcfe}
#chart svg{max-width:none}#chart.fit svg{width:100%;height:auto}.logs{display:grid;grid-template-columns:1fr 1fr;gap:6px;min-height:0}
.logs ol{margin:0;padding-left:4px;list-style:none;font:11px/1.35 ui-monospace,monospace;max-height:180px;overflow:auto}
#scrubline{display:flex;gap:6px;align-items:center}#scrub{flex:1}
@media (max-width:900px){main{grid-template-columns:1fr;height:auto}#transcript{max-height:55vh}section{max-height:none}.logs{grid-template-columns:1fr}}
`;

const SCRIPT = String.raw`
(function(){
'use strict';
var $ = function(id){ return document.getElementById(id); };
var current = null, es = null, lastSeq = 0, liveText = {}, prompts = {}, scrubLive = true, snapshotUsage = null;
var known = {}, tree = null;
function el(tag, cls, text){ var e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; }
function api(method, path, body){
  var init = { method: method, credentials: 'same-origin', headers: {} };
  if (body !== undefined) { init.headers['content-type'] = 'application/json'; init.body = JSON.stringify(body); }
  return fetch(path, init).then(function(r){ return r.json().catch(function(){ return {}; }).then(function(data){
    if (!r.ok) { var e = new Error((data.error && data.error.message) || ('HTTP ' + r.status)); e.status = r.status; e.data = data; throw e; }
    return data; }); });
}
function setStatus(text){ $('status').textContent = text; }
function fail(e){ setStatus('error: ' + e.message); }
function short(v, n){ var s = typeof v === 'string' ? v : JSON.stringify(v); if (s === undefined) s = ''; return s.length > n ? s.slice(0, n) + '...' : s; }

// Sub-agent sessions are listed under their parent, indented; one whose parent is not listed (an orphan) is a top-level row.
function loadSessions(){
  return api('GET', '/api/sessions').then(function(d){
    var ul = $('session-list'); ul.textContent = '';
    known = {}; var children = {}, shown = {};
    d.sessions.forEach(function(s){ known[s.sessionId] = s; });
    d.sessions.sort(function(a, b){ return (b.lastActivityAt || 0) - (a.lastActivityAt || 0); });
    d.sessions.forEach(function(s){ if (s.parentId && known[s.parentId]) (children[s.parentId] = children[s.parentId] || []).push(s); });
    var row = function(s, depth){
      if (shown[s.sessionId]) return; // A parent cycle in bad data lists each session once.
      shown[s.sessionId] = true;
      var li = el('li', depth ? 'sub' : '', s.agent + ' - ' + s.sessionId.slice(0, 8));
      li.classList.toggle('current', s.sessionId === current);
      li.dataset.id = s.sessionId; li.dataset.depth = String(depth);
      if (depth) { li.style.marginLeft = Math.min(depth, 6) * 14 + 'px'; li.dataset.parent = s.parentId; }
      li.appendChild(el('small', '', s.phase + ' / ' + s.status + ' / $' + (s.costUsd || 0).toFixed(4)));
      li.onclick = function(){ select(s.sessionId); };
      ul.appendChild(li);
      (children[s.sessionId] || []).forEach(function(c){ row(c, depth + 1); });
    };
    d.sessions.forEach(function(s){ if (!s.parentId || !known[s.parentId]) row(s, 0); });
    d.sessions.forEach(function(s){ row(s, 0); });
  }).catch(fail);
}
function loadAgents(){
  return api('GET', '/api/agents').then(function(d){
    var sel = $('agent'); sel.textContent = '';
    d.agents.forEach(function(a){ sel.appendChild(el('option', '', a)); });
  });
}

function select(id){
  if (es) es.close();
  current = id; lastSeq = 0; liveText = {}; prompts = {}; scrubLive = true; tree = null;
  $('tree').hidden = true; $('tree-nodes').textContent = ''; $('focus-moved').hidden = true;
  $('transcript').textContent = ''; $('prompts').textContent = ''; $('events-log').textContent = ''; $('effects-log').textContent = '';
  $('session-title').textContent = id;
  Array.prototype.forEach.call(document.querySelectorAll('#session-list li'), function(li){ li.classList.toggle('current', li.dataset.id === id); });
  es = new EventSource('/api/sessions/' + encodeURIComponent(id) + '/events?inspect=1');
  es.addEventListener('entry', function(m){ onEntry(JSON.parse(m.data)); });
  es.addEventListener('agent', function(m){ onAgent(JSON.parse(m.data)); });
  es.addEventListener('snapshot', function(m){ onSnapshot(JSON.parse(m.data)); });
  es.addEventListener('status', function(m){ var s = JSON.parse(m.data); setStatus(s.phase + ' / ' + s.mode + ' / gen ' + s.gen); $('mode').dataset.mode = s.mode; $('mode').textContent = s.mode === 'local' ? 'Take remote control' : 'Hand to terminal'; });
  es.addEventListener('permission_prompt', function(m){ showPrompt(JSON.parse(m.data)); });
  es.addEventListener('permission_resolved', function(m){ var p = JSON.parse(m.data); removePrompt(p.requestId); });
  es.addEventListener('presence', function(m){ $('presence').textContent = JSON.parse(m.data).online ? 'online' : 'offline'; });
  es.addEventListener('thinking', function(m){ $('thinking').textContent = JSON.parse(m.data).active ? 'thinking...' : ''; });
  es.addEventListener('inspect', function(m){ onInspect(JSON.parse(m.data)); });
  es.addEventListener('tree', function(m){ onTree(JSON.parse(m.data)); });
  es.addEventListener('error', function(m){ if (m.data) { var e = JSON.parse(m.data); setStatus(e.code + ': ' + e.message); } });
  es.addEventListener('gap', function(m){ var g = JSON.parse(m.data); addMeta('gap: entries before seq ' + g.firstSeq + ' are no longer kept (' + g.reason + ')'); if (g.reason === 'ahead') { lastSeq = 0; $('transcript').textContent = ''; } });
  es.addEventListener('done', function(){ setStatus('stopped'); loadSessions(); });
  refreshSnapshot();
}

// The session tree of the viewed session: its sessions in tree order with their state, the focus
// marked; Enter on a sub-agent of the focused session, Exit when the viewed session is the focus.
function onTree(t){
  if (t && t.sessionId !== current) return;
  var before = tree; tree = t;
  $('tree').hidden = !t; $('tree-nodes').textContent = '';
  if (!t) { $('focus-moved').hidden = true; return; }
  var kids = {}, seen = {};
  Object.keys(t.nodes).forEach(function(id){ var p = t.nodes[id].parentId; if (p) (kids[p] = kids[p] || []).push(id); });
  var draw = function(id, depth){
    var n = t.nodes[id]; if (!n || seen[id]) return; seen[id] = true;
    var cls = 'node ' + n.state + (id === t.focus ? ' focus' : '') + (id === current ? ' viewed' : '');
    var node = el('span', cls, (depth ? new Array(depth + 1).join('\u21b3') + ' ' : '') + id.slice(0, 8) + ' ' + n.state + (id === t.focus ? ' (focus)' : ''));
    node.dataset.id = id; node.dataset.state = n.state; node.title = id;
    node.onclick = function(){ if (id !== current) select(id); };
    if (n.parentId === t.focus && n.state !== 'completed') {
      var enter = el('button', 'enter', 'Enter'); enter.type = 'button';
      enter.onclick = function(ev){ ev.stopPropagation(); enterTree(id); };
      node.appendChild(document.createTextNode(' ')); node.appendChild(enter);
    }
    $('tree-nodes').appendChild(node);
    (kids[id] || []).forEach(function(k){ draw(k, depth + 1); });
  };
  draw(t.rootId, 0);
  Object.keys(t.nodes).forEach(function(id){ draw(id, 0); });
  var mine = t.nodes[current];
  $('tree-exit').hidden = !(t.focus === current && mine && mine.parentId);
  // Someone moved the focus away while this session is viewed: offer to follow, never jump.
  if (t.focus === current) $('focus-moved').hidden = true;
  else if (before && before.focus !== t.focus) {
    $('focus-follow').textContent = 'focus moved to ' + t.focus.slice(0, 8) + ' \u2014 follow';
    $('focus-follow').dataset.id = t.focus; $('focus-moved').hidden = false;
  }
  if (Object.keys(t.nodes).some(function(id){ return !known[id]; })) loadSessions();
}
function enterTree(id){
  api('POST', '/api/sessions/' + encodeURIComponent(id) + '/tree/enter', {}).then(function(t){ select(t.focus); }).catch(fail);
}
function exitTree(){
  if (current) api('POST', '/api/sessions/' + encodeURIComponent(current) + '/tree/exit', {}).then(function(t){ select(t.focus); }).catch(fail);
}
function newSubAgent(){
  if (!current) return;
  var parent = current;
  var spawn = function(){
    var s = known[parent];
    if (!s) throw new Error('session ' + parent + ' is not listed: its agent and working directory are unknown');
    return api('POST', '/api/sessions', { agent: s.agent, workDir: s.workDir, parentId: parent });
  };
  (known[parent] ? Promise.resolve().then(spawn) : loadSessions().then(spawn))
    .then(function(d){ setStatus('sub-agent ' + d.sessionId + ' started'); return loadSessions(); }).catch(fail);
}

function addMeta(text){ $('transcript').appendChild(el('div', 'entry meta', text)); }
function scrollDown(){ var t = $('transcript'); t.scrollTop = t.scrollHeight; }

function onEntry(entry){
  if (entry.seq <= lastSeq) return; // Already have it (a replay overlapping what arrived live).
  lastSeq = entry.seq;
  var scrub = $('scrub'); scrub.max = String(lastSeq); if (scrubLive) scrub.value = String(lastSeq);
  $('scrub-label').textContent = scrubLive ? 'live (seq ' + lastSeq + ')' : 'seq ' + scrub.value + ' of ' + lastSeq;
  var p = entry.payload || {}, box;
  switch (entry.type) {
    case 'user_message': box = el('div', 'entry user', p.text); break;
    case 'session_identified': box = el('div', 'entry meta', 'agent session started'); break;
    case 'message':
      if (p.role !== 'assistant') return;
      box = el('div', 'entry assistant', (p.blocks || []).filter(function(b){ return b.type === 'text'; }).map(function(b){ return b.text; }).join(''));
      if (liveText[p.id]) { liveText[p.id].remove(); delete liveText[p.id]; }
      break;
    case 'tool_call': box = el('div', 'entry tool', 'tool ' + p.toolName + ' ' + short(p.input, 300)); break;
    case 'tool_result': box = el('div', 'entry tool', 'result ' + p.status + ': ' + short(p.output, 500)); break;
    case 'permission_request': box = el('div', 'entry meta', 'permission asked: ' + p.toolName); break;
    case 'permission_resolved': box = el('div', 'entry meta', 'permission ' + p.status); removePrompt(p.requestId); break;
    case 'turn_complete':
      box = el('div', 'entry meta', 'turn ' + p.status + (p.usage ? ' - ' + p.usage.inputTokens + ' in / ' + p.usage.outputTokens + ' out, $' + (p.usage.costUsd || 0).toFixed(4) : ''));
      Object.keys(liveText).forEach(function(k){ liveText[k].remove(); }); liveText = {};
      refreshSnapshot(); break;
    default: box = el('div', 'entry meta', entry.type + (entry.payload ? ' ' + short(entry.payload, 160) : ''));
  }
  box.dataset.seq = String(entry.seq); box.dataset.type = entry.type;
  box.insertBefore(el('span', 'seq', '#' + entry.seq), box.firstChild);
  $('transcript').appendChild(box); scrollDown();
}

function onAgent(ev){
  if (ev.type !== 'text_delta') return;
  var box = liveText[ev.messageId];
  if (!box) { box = el('div', 'entry live-text', ''); liveText[ev.messageId] = box; $('transcript').appendChild(box); }
  box.textContent += ev.text; scrollDown();
}

function onSnapshot(s){
  if (!s || !s.sessionId) return;
  if (!s.usage) { setStatus(s.phase + ' (stored: the next message continues it)'); return; }
  snapshotUsage = s.usage;
  $('usage').textContent = s.usage.turns + ' turns, ' + s.usage.inputTokens + ' in / ' + s.usage.outputTokens + ' out, $' + (s.usage.costUsd || 0).toFixed(4);
  setStatus(s.phase + ' / ' + s.mode + ' / gen ' + s.gen);
  $('mode').dataset.mode = s.mode; $('mode').textContent = s.mode === 'local' ? 'Take remote control' : 'Hand to terminal';
  Object.keys(s.requests || {}).forEach(function(id){ var r = s.requests[id]; showPrompt({ requestId: id, toolName: r.toolName, input: r.input }); });
  if (scrubLive) highlight(s.state);
}
function refreshSnapshot(){ if (!current) return; var id = current; api('GET', '/api/sessions/' + encodeURIComponent(id)).then(function(s){ if (id === current) onSnapshot(s); }).catch(function(){}); }

function showPrompt(p){
  if (prompts[p.requestId]) return;
  var box = el('div', 'prompt'); box.dataset.requestId = p.requestId;
  box.appendChild(el('strong', '', 'Allow ' + (p.toolName || 'tool') + '?'));
  box.appendChild(el('pre', '', short(p.input, 800)));
  var bar = el('div', 'bar');
  var allow = el('button', 'allow', 'Allow'), deny = el('button', 'deny', 'Deny');
  allow.onclick = function(){ decide(p.requestId, 'allow'); }; deny.onclick = function(){ decide(p.requestId, 'deny'); };
  bar.appendChild(allow); bar.appendChild(deny); box.appendChild(bar);
  prompts[p.requestId] = box; $('prompts').appendChild(box);
}
function removePrompt(id){ if (prompts[id]) { prompts[id].remove(); delete prompts[id]; } }
function decide(id, decision){
  api('POST', '/api/sessions/' + encodeURIComponent(current) + '/permissions/' + encodeURIComponent(id), { decision: decision })
    .then(function(){ removePrompt(id); })
    .catch(function(e){ if (e.status === 409) { removePrompt(id); setStatus('already decided: ' + short(e.data.outcome, 120)); } else fail(e); });
}

function activeIds(value){
  var ids = ['session'];
  if (typeof value === 'string') ids.push('session.' + value);
  else if (value && typeof value === 'object') Object.keys(value).forEach(function(k){ ids.push('session.' + k); var v = value[k]; if (typeof v === 'string') ids.push('session.' + k + '.' + v); });
  return ids;
}
function highlight(value){
  var ids = activeIds(value);
  Array.prototype.forEach.call(document.querySelectorAll('#chart g.state'), function(g){ g.classList.toggle('active', ids.indexOf(g.getAttribute('data-state')) >= 0); });
  $('chart-state').textContent = JSON.stringify(value);
  // Bring the innermost active state into view (the chart is wider than the panel).
  var chart = $('chart'), deepest = null;
  Array.prototype.forEach.call(chart.querySelectorAll('g.state.active rect'), function(r){ deepest = r; });
  if (deepest && !chart.classList.contains('fit')) {
    var box = deepest.getBBox();
    chart.scrollLeft = Math.max(0, box.x + box.width / 2 - chart.clientWidth / 2);
    chart.scrollTop = Math.max(0, box.y + box.height / 2 - chart.clientHeight / 2);
  }
}
function logLine(list, text){ var ol = $(list); ol.appendChild(el('li', '', text)); while (ol.children.length > 200) ol.removeChild(ol.firstChild); ol.scrollTop = ol.scrollHeight; }
function onInspect(w){
  if (w.type === '@xstate.actor' || w.type === '@xstate.snapshot') { if (scrubLive) highlight(w.snapshot.value); }
  if (w.type === '@xstate.event') logLine('events-log', '#' + w.seq + ' ' + w.event.type + (w.event.event ? ' ' + w.event.event.type : ''));
  if (w.type === 'effect') logLine('effects-log', '#' + w.seq + ' ' + (w.effect && w.effect.type));
}
function scrubTo(seq){
  if (!current) return;
  scrubLive = seq >= lastSeq;
  $('scrub-label').textContent = scrubLive ? 'live (seq ' + lastSeq + ')' : 'seq ' + seq + ' of ' + lastSeq;
  if (scrubLive) { refreshSnapshot(); return; }
  api('GET', '/api/sessions/' + encodeURIComponent(current) + '/inspect?at_seq=' + seq).then(function(d){ if (!scrubLive) highlight(d.chart.value); }).catch(fail);
}

function loadChart(){
  return fetch('/api/diagram.svg', { credentials: 'same-origin' }).then(function(r){ return r.text(); }).then(function(text){
    var doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    var svg = document.importNode(doc.documentElement, true);
    $('chart').textContent = ''; $('chart').appendChild(svg);
  });
}

$('new-session').addEventListener('submit', function(ev){
  ev.preventDefault();
  api('POST', '/api/sessions', { agent: $('agent').value, workDir: $('workdir').value, mode: $('newmode').value })
    .then(function(d){ return loadSessions().then(function(){ select(d.sessionId); }); }).catch(fail);
});
$('send-form').addEventListener('submit', function(ev){
  ev.preventDefault();
  var text = $('message').value.trim(); if (!text || !current) return;
  var localId = 'web-' + Date.now().toString(36) + '-' + Math.random().toString(36).slice(2, 8);
  var attempt = function(n){ return api('POST', '/api/sessions/' + encodeURIComponent(current) + '/messages', { text: text, localId: localId })
    .catch(function(e){ if (n < 3 && (!e.status || e.status >= 500)) return attempt(n + 1); throw e; }); };
  $('message').value = '';
  attempt(0).catch(function(e){ fail(e); $('message').value = text; });
});
$('abort').onclick = function(){ if (current) api('POST', '/api/sessions/' + encodeURIComponent(current) + '/abort', {}).catch(fail); };
$('stop').onclick = function(){ if (current) api('POST', '/api/sessions/' + encodeURIComponent(current) + '/stop', {}).then(loadSessions).catch(fail); };
$('mode').onclick = function(){ if (current) api('POST', '/api/sessions/' + encodeURIComponent(current) + '/mode', { to: $('mode').dataset.mode === 'local' ? 'remote' : 'local' }).catch(fail); };
$('tree-exit').onclick = exitTree;
$('sub-agent').onclick = newSubAgent;
$('focus-follow').onclick = function(ev){ ev.preventDefault(); select(this.dataset.id); };
$('scrub').addEventListener('input', function(){ scrubTo(Number($('scrub').value)); });
$('chart-fit').onclick = function(){ $('chart').classList.toggle('fit'); };
$('scrub-live').onclick = function(){ $('scrub').value = String(lastSeq); scrubTo(lastSeq); };

Promise.all([loadAgents(), loadSessions(), loadChart()]).catch(fail);
setInterval(loadSessions, 5000);
})();
`;

const BODY = String.raw`
<header>
  <h1>ase serve</h1>
  <form id="new-session">
    <select id="agent" aria-label="agent"></select>
    <input id="workdir" aria-label="working directory" placeholder="working directory" required size="22">
    <select id="newmode" aria-label="mode"><option>remote</option><option>local</option></select>
    <button class="primary" id="create" type="submit">New session</button>
  </form>
</header>
<main>
  <section id="sessions"><h2>Sessions</h2><ul id="session-list"></ul></section>
  <section id="chat">
    <h2>Session <span id="session-title"></span></h2>
    <div id="status"></div>
    <div class="bar"><span id="presence"></span><span id="thinking"></span><span id="usage"></span></div>
    <div id="tree" class="bar" hidden><span>tree:</span><span id="tree-nodes"></span><button id="tree-exit" type="button" hidden>Exit to parent</button></div>
    <div id="focus-moved" role="status" hidden><a id="focus-follow" href="#"></a></div>
    <div id="transcript" aria-live="polite"></div>
    <div id="prompts"></div>
    <form id="send-form" class="bar">
      <textarea id="message" placeholder="Message the agent"></textarea>
      <button class="primary" id="send" type="submit">Send</button>
    </form>
    <div class="bar"><button id="abort" type="button">Abort</button><button id="mode" type="button" data-mode="remote">Hand to terminal</button><button id="stop" type="button">Stop</button><button id="sub-agent" type="button">New sub-agent</button></div>
  </section>
  <section id="inspector">
    <h2>Inspector <small id="chart-state"></small></h2>
    <div id="chart"></div>
    <div id="scrubline"><input id="scrub" type="range" min="0" max="0" value="0" aria-label="replay to seq"><span id="scrub-label">live</span><button id="scrub-live" type="button">Live</button><button id="chart-fit" type="button">Fit</button></div>
    <div class="logs"><div><h2>Events</h2><ol id="events-log"></ol></div><div><h2>Effects</h2><ol id="effects-log"></ol></div></div>
  </section>
</main>
`;

export function renderPage(nonce: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>ase serve</title><link rel="icon" href="data:,"><style>${CSS}</style></head>
<body>${BODY}<script nonce="${nonce}">${SCRIPT}</script></body></html>
`;
}
