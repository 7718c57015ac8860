/**
 * The page's own script (sessions, the transcript, the send box, prompts, the tree line, the
 * inspector), served as /assets/page.js. It signs in with the page cookie the printed URL set,
 * lists and starts sessions, streams one session's events (EventSource resumes with Last-Event-ID
 * by itself, and the page drops any seq it already has), and shows the inspector: the
 * server-laid-out SVG statechart with the active states highlighted live (also when the chart
 * arrives after the stream's first frames), the event and effect logs, and a scrubber over the
 * durable log. Sub-agent sessions sit indented under their parent; a session of a session tree
 * shows the tree with its focus (from the stream's `tree` frames) and moves it (enter / exit), and
 * a focus moved by someone else is a notice to follow, never a jump. A local session's terminal UI
 * is shown live beside the transcript (terminal-panel.ts). Tool inputs go through
 * tool-view.ts and the agent's text through markdown.ts (window.ase); everything else the server
 * sends is written with textContent, never as HTML.
 */
export const PAGE_SCRIPT = String.raw`
(function(){
'use strict';
var ase = window.ase;
var $ = function(id){ return document.getElementById(id); };
/** A message entry's text: its text blocks joined (its tool calls and thinking have entries of their own). */
var messageText = function(p){ return (p.blocks || []).filter(function(b){ return b.type === 'text'; }).map(function(b){ return b.text; }).join(''); };
var current = null, es = null, lastSeq = 0, liveText = {}, prompts = {}, scrubLive = true, snapshotUsage = null;
// Texts sent through the API (user_message) whose echo as the agent's user message has not come yet.
var sentTexts = [];
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
  current = id; lastSeq = 0; liveText = {}; prompts = {}; scrubLive = true; tree = null; sentTexts = [];
  $('tree').hidden = true; $('tree-nodes').textContent = ''; $('focus-moved').hidden = true;
  $('transcript').textContent = ''; $('prompts').textContent = ''; $('events-log').textContent = ''; $('effects-log').textContent = '';
  $('session-title').textContent = id;
  ase.terminalPanel.follow(id, undefined); // the terminal of the session viewed before is closed
  Array.prototype.forEach.call(document.querySelectorAll('#session-list li'), function(li){ li.classList.toggle('current', li.dataset.id === id); });
  es = new EventSource('/api/sessions/' + encodeURIComponent(id) + '/events?inspect=1');
  es.addEventListener('entry', function(m){ onEntry(JSON.parse(m.data)); });
  es.addEventListener('agent', function(m){ onAgent(JSON.parse(m.data)); });
  es.addEventListener('snapshot', function(m){ onSnapshot(JSON.parse(m.data)); });
  es.addEventListener('status', function(m){ var s = JSON.parse(m.data); setStatus(s.phase + ' / ' + s.mode + ' / gen ' + s.gen); $('mode').dataset.mode = s.mode; $('mode').textContent = s.mode === 'local' ? 'Take remote control' : 'Hand to terminal'; ase.terminalPanel.follow(id, s.mode); });
  es.addEventListener('permission_prompt', function(m){ showPrompt(JSON.parse(m.data)); });
  es.addEventListener('permission_resolved', function(m){ var p = JSON.parse(m.data); removePrompt(p.requestId); });
  es.addEventListener('presence', function(m){ $('presence').textContent = JSON.parse(m.data).online ? 'online' : 'offline'; });
  es.addEventListener('thinking', function(m){ $('thinking').textContent = JSON.parse(m.data).active ? 'thinking...' : ''; });
  es.addEventListener('inspect', function(m){ onInspect(JSON.parse(m.data)); });
  es.addEventListener('tree', function(m){ onTree(JSON.parse(m.data)); });
  es.addEventListener('error', function(m){ if (m.data) { var e = JSON.parse(m.data); setStatus(e.code + ': ' + e.message); } });
  es.addEventListener('gap', function(m){ var g = JSON.parse(m.data); addMeta('gap: entries before seq ' + g.firstSeq + ' are no longer kept (' + g.reason + ')'); if (g.reason === 'ahead') { lastSeq = 0; sentTexts = []; $('transcript').textContent = ''; } });
  es.addEventListener('done', function(){ setStatus('stopped'); ase.terminalPanel.follow(id, undefined); loadSessions(); });
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
    case 'user_message': sentTexts.push(p.text); box = el('div', 'entry user', p.text); break;
    case 'session_identified': box = el('div', 'entry meta', 'agent session started'); break;
    case 'message':
      if (p.role === 'user') {
        // A message typed in the terminal UI (local mode) has only this entry: show it. One sent
        // from here (or the API) was shown as its user_message already.
        var said = messageText(p);
        var sent = sentTexts.indexOf(said);
        if (said === '' || sent >= 0) { if (sent >= 0) sentTexts.splice(sent, 1); return; }
        box = el('div', 'entry user', said); break;
      }
      if (p.role !== 'assistant') return;
      var text = messageText(p);
      if (liveText[p.id]) { liveText[p.id].remove(); delete liveText[p.id]; }
      // A message of only tool calls or thinking has no text: its tool calls have entries of their own.
      if (text.trim() === '') return;
      box = el('div', 'entry assistant');
      box.appendChild(ase.renderMarkdown(text));
      break;
    case 'tool_call': box = el('div', 'entry tool'); box.appendChild(el('strong', '', p.title && p.title !== p.toolName ? p.toolName + ': ' + short(p.title, 120) : String(p.toolName))); box.appendChild(ase.toolView(p.toolName, p.input)); break;
    case 'tool_result': box = el('div', 'entry tool', 'result ' + p.status + ': ' + short(p.output, 2000)); break;
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
  if (s.sessionId === current) ase.terminalPanel.follow(current, s.mode);
  Object.keys(s.requests || {}).forEach(function(id){ var r = s.requests[id]; showPrompt({ requestId: id, toolName: r.toolName, input: r.input }); });
  if (scrubLive) highlight(s.state);
}
function refreshSnapshot(){ if (!current) return; var id = current; api('GET', '/api/sessions/' + encodeURIComponent(id)).then(function(s){ if (id === current) onSnapshot(s); }).catch(function(){}); }

function showPrompt(p){
  if (prompts[p.requestId]) return;
  var box = el('div', 'prompt'); box.dataset.requestId = p.requestId;
  box.appendChild(el('strong', '', 'Allow ' + (p.toolName || 'tool') + '?'));
  box.appendChild(ase.toolView(p.toolName, p.input));
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
// The state to show, kept so a chart that arrives after the stream's first frames shows it at once.
var chartValue;
function highlight(value){
  chartValue = value;
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
    if (chartValue !== undefined) highlight(chartValue);
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
// Next to the terminal panel: the phone takes control (the desk's terminal shows a banner).
$('terminal-take').onclick = function(){ if (current) api('POST', '/api/sessions/' + encodeURIComponent(current) + '/mode', { to: 'remote' }).then(function(){ setStatus('remote control taken'); }).catch(fail); };
$('tree-exit').onclick = exitTree;
$('sub-agent').onclick = newSubAgent;
$('focus-follow').onclick = function(ev){ ev.preventDefault(); select(this.dataset.id); };
$('scrub').addEventListener('input', function(){ scrubTo(Number($('scrub').value)); });
$('chart-fit').onclick = function(){ $('chart').classList.toggle('fit'); };
// On a phone the inspector is folded away until asked for (the toggle shows only there).
$('inspector-toggle').onclick = function(){
  var folded = $('inspector').classList.toggle('folded');
  this.setAttribute('aria-expanded', String(!folded)); this.textContent = folded ? 'Show' : 'Hide';
  if (!folded && chartValue !== undefined) highlight(chartValue);
};
$('scrub-live').onclick = function(){ $('scrub').value = String(lastSeq); scrubTo(lastSeq); };

Promise.all([loadAgents(), loadSessions(), loadChart()]).catch(fail);
setInterval(loadSessions, 5000);
})();
`;
