/**
 * The page's terminal panel, in the browser: a local session's terminal UI (the agent's own, in
 * the server's PTY) shown live and read-only with xterm.js (@xterm/xterm, served by the server
 * from node_modules as /assets/xterm.js), beside the transcript, with "Take remote control" next
 * to it. It is a viewer of the session's terminal WebSocket (`GET /api/sessions/:id/terminal`,
 * docs/server.md "The terminal"): status frames (JSON text) give the PTY's cols/rows and who
 * controls, binary frames are the terminal's output (the first one repaints the current screen).
 * The terminal is drawn at the PTY's own size, so the agent's layout is exactly the desk's, and
 * scaled down to fit the panel (or shown at 1:1 and scrolled inside the panel: "Actual size", for
 * a phone). It sends nothing: the page is never a writer. A lost connection is reopened (with a
 * growing delay) while the session stays local; a session that ended is not.
 */
export const TERMINAL_PANEL_SCRIPT = String.raw`
(function(ase){
'use strict';
var $ = function(id){ return document.getElementById(id); };
var term = null, socket = null, sessionId = null, wanted = false, retryMs = 500, retryTimer = null, last = null;
function setLine(text){ $('terminal-state').textContent = text; }
function describe(s){
  var who = s.mode === 'local' ? (s.writerAttached ? 'the desk is attached' : 'no desk attached') : 'remote control';
  return s.cols + 'x' + s.rows + ' - ' + (s.running ? 'terminal UI running' : 'no terminal UI') + ' - ' + who;
}
/** Scales the terminal (drawn at the PTY's size) to the panel's width; never wider than the panel. */
function fit(){
  if (!term || !term.element) return;
  var screen = term.element.querySelector('.xterm-screen');
  var box = $('terminal-screen'), host = $('terminal-host');
  if (!screen || !box.clientWidth) return;
  var width = screen.offsetWidth, height = screen.offsetHeight;
  if (!width || !height) return;
  // "Actual size": the PTY's screen at 1:1, scrolled inside the panel (a phone reads it that way).
  var actual = box.classList.contains('actual');
  var scale = actual ? 1 : Math.min(1, box.clientWidth / width);
  host.style.transform = 'scale(' + scale + ')';
  host.dataset.scale = String(scale);
  box.style.height = actual ? '' : Math.ceil(height * scale) + 'px';
}
function ensureTerminal(cols, rows){
  if (!term) {
    term = new window.Terminal({ cols: cols, rows: rows, disableStdin: true, cursorBlink: false, scrollback: 2000, fontSize: 14, convertEol: false,
      theme: { background: '#1f2430', foreground: '#e8ecf3' } });
    term.open($('terminal-host'));
  } else if (term.cols !== cols || term.rows !== rows) {
    term.resize(cols, rows);
  }
  requestAnimationFrame(fit);
}
function onStatus(s){
  if (s.type !== 'status') return;
  last = s;
  ensureTerminal(Math.max(1, s.cols | 0), Math.max(1, s.rows | 0));
  setLine(describe(s));
  $('terminal-take').hidden = s.mode !== 'local';
  $('terminal-panel').dataset.mode = s.mode; $('terminal-panel').dataset.running = String(!!s.running);
}
function open(){
  clearTimeout(retryTimer); retryTimer = null;
  if (!wanted || !sessionId) return;
  var id = sessionId;
  var url = (location.protocol === 'https:' ? 'wss:' : 'ws:') + '//' + location.host + '/api/sessions/' + encodeURIComponent(id) + '/terminal?role=viewer';
  var ws = new WebSocket(url);
  ws.binaryType = 'arraybuffer';
  socket = ws;
  ws.onopen = function(){ retryMs = 500; };
  ws.onmessage = function(m){
    if (ws !== socket) return;
    if (typeof m.data === 'string') { try { onStatus(JSON.parse(m.data)); } catch (e) { /* not a status frame */ } }
    else if (term) term.write(new Uint8Array(m.data));
  };
  ws.onclose = function(ev){
    if (ws !== socket) return;
    socket = null;
    if (!wanted || id !== sessionId) return;
    var why = 'terminal closed (' + ev.code + (ev.reason ? ': ' + ev.reason : '') + ')';
    // Only a lost connection (1006) or a cut for reading too slowly (1008) is reopened: the session
    // ended (1000) or the server stopping (1001) are not, since opening the terminal of a session
    // that is not running would start it again.
    if (ev.code !== 1006 && ev.code !== 1008) { setLine(why); return; }
    setLine(why + '; reconnecting');
    retryTimer = setTimeout(open, retryMs); retryMs = Math.min(retryMs * 2, 10000);
  };
}
function close(){
  wanted = false; clearTimeout(retryTimer); retryTimer = null;
  if (socket) { var s = socket; socket = null; s.close(1000, 'the page looks elsewhere'); }
  if (term) { term.dispose(); term = null; }
  last = null;
  $('terminal-panel').hidden = true; document.querySelector('main').classList.remove('with-terminal');
}
/**
 * Follows the viewed session: its terminal is shown while it is local (the agent's terminal UI runs
 * in the server), and closed once it is remote or another session is viewed. Called on every
 * status/snapshot the page gets; cheap when nothing changes.
 */
ase.terminalPanel = {
  follow: function(id, mode){
    if (id !== sessionId || mode !== 'local') { if (wanted || term) close(); sessionId = id; }
    if (!id || mode !== 'local' || wanted) return;
    wanted = true; sessionId = id; retryMs = 500;
    $('terminal-panel').hidden = false; document.querySelector('main').classList.add('with-terminal');
    $('terminal-take').hidden = false; setLine('connecting');
    open();
  },
  status: function(){ return last; },
  fit: fit,
};
$('terminal-zoom').onclick = function(){
  var actual = $('terminal-screen').classList.toggle('actual');
  this.setAttribute('aria-pressed', String(actual)); this.textContent = actual ? 'Fit to panel' : 'Actual size';
  fit();
};
window.addEventListener('resize', fit);
if (window.ResizeObserver) new ResizeObserver(fit).observe($('terminal-screen'));
})(window.ase = window.ase || {});
`;
