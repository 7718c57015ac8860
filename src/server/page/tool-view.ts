/**
 * Tool inputs shown as what they are, in the browser: a shell command as a command, an edit as a
 * diff, a file as a path, anything else as its fields (or JSON). The shapes are the engines':
 * Claude's Bash/Edit/MultiEdit/Write/Read ({command}, {file_path, old_string, new_string},
 * {edits}, {content}), Codex's shell/apply_patch ({command, cwd}, {changes} as a list of
 * {path, kind, diff} or a map of path → {type, content | unified_diff}), ACP's {path, oldText, newText}.
 * Used by the permission card and the transcript. Everything is written with textContent; long
 * text wraps and scrolls inside its own box (CSS in style.ts), and nothing is cut without saying so.
 */
export const TOOL_VIEW_SCRIPT = String.raw`
(function(ase){
'use strict';
var MAX_LINES = 4000, MAX_CHARS = 200000;
function el(tag, cls, text){ var e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; }
function str(v){ if (typeof v === 'string') return v; try { return JSON.stringify(v, null, 2) || String(v); } catch (e) { return String(v); } }
function capped(text){ return text.length > MAX_CHARS ? [text.slice(0, MAX_CHARS), text.length - MAX_CHARS] : [text, 0]; }
function more(n, unit){ return el('div', 'more', '... ' + n + ' more ' + unit + ' not shown'); }
function label(text){ return el('div', 'label', text); }
function pathEl(p){ var e = el('code', 'path', String(p)); e.title = String(p); return e; }
function commandEl(cmd){
  var c = capped(Array.isArray(cmd) ? cmd.map(String).join(' ') : String(cmd));
  var frag = document.createDocumentFragment(); frag.appendChild(el('pre', 'cmd', c[0]));
  if (c[1]) frag.appendChild(more(c[1], 'characters'));
  return frag;
}
/** Lines as a diff block: each [sign, text], sign one of + - @ (hunk) or ' ' (context). */
function diffEl(lines){
  var pre = el('pre', 'diff'), frag = document.createDocumentFragment();
  lines.slice(0, MAX_LINES).forEach(function(l){ pre.appendChild(el('span', l[0] === '+' ? 'add' : l[0] === '-' ? 'del' : l[0] === '@' ? 'hunk' : 'ctx', (l[0] === '@' ? '' : l[0] + ' ') + l[1])); });
  frag.appendChild(pre);
  if (lines.length > MAX_LINES) frag.appendChild(more(lines.length - MAX_LINES, 'lines'));
  return frag;
}
function splitLines(text){ var lines = String(text).split('\n'); if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop(); return lines; }
/** old → new as removed and added lines around the lines both share at the start and the end. */
function diffOf(oldText, newText){
  var a = splitLines(oldText || ''), b = splitLines(newText || '');
  if (!oldText) a = []; if (!newText) b = [];
  var start = 0; while (start < a.length && start < b.length && a[start] === b[start]) start++;
  var endA = a.length, endB = b.length; while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) { endA--; endB--; }
  var out = [], ctx = 2, i;
  for (i = Math.max(0, start - ctx); i < start; i++) out.push([' ', a[i]]);
  for (i = start; i < endA; i++) out.push(['-', a[i]]);
  for (i = start; i < endB; i++) out.push(['+', b[i]]);
  for (i = endA; i < Math.min(a.length, endA + ctx); i++) out.push([' ', a[i]]);
  return out;
}
/** A unified diff's text, line by line (a body without +/- prefixes is a new file's content). */
function unifiedOf(text){
  var lines = splitLines(text || '');
  var unified = lines.some(function(l){ return /^(@@|\+\+\+ |--- )/.test(l); });
  return lines.map(function(l){
    if (!unified) return ['+', l];
    if (/^@@/.test(l)) return ['@', l];
    if (/^(\+\+\+ |--- )/.test(l)) return ['@', l];
    if (l[0] === '+' || l[0] === '-') return [l[0], l.slice(1)];
    return [' ', l.slice(1)];
  });
}
function kindOf(k){ return typeof k === 'string' ? k : k && typeof k.type === 'string' ? k.type : ''; }
/** The fields not shown above, as a small list (scalars as they are, the rest as JSON). */
function restEl(input, shown){
  var keys = Object.keys(input).filter(function(k){ return shown.indexOf(k) < 0 && input[k] !== undefined && input[k] !== null && input[k] !== ''; });
  if (!keys.length) return null;
  var dl = el('dl');
  keys.forEach(function(k){ dl.appendChild(el('dt', '', k)); dl.appendChild(el('dd', '', capped(str(input[k]))[0])); });
  return dl;
}
function changeEls(box, path, change){
  var head = el('div'); head.appendChild(pathEl(path)); var kind = kindOf(change.kind || change.type); if (kind) head.appendChild(el('span', 'kind', kind));
  if (change.move_path || change.movePath) { head.appendChild(el('span', 'kind', 'to')); head.appendChild(pathEl(change.move_path || change.movePath)); }
  box.appendChild(head);
  var body = change.diff !== undefined ? change.diff : change.unified_diff !== undefined ? change.unified_diff : change.content;
  if (typeof body === 'string' && body !== '') box.appendChild(kind === 'delete' && change.diff === undefined && change.unified_diff === undefined ? diffEl(splitLines(body).map(function(l){ return ['-', l]; })) : diffEl(unifiedOf(body)));
}
/** The input of a tool call or a permission request, shown as what it is. */
ase.toolView = function(toolName, input){
  var box = el('div', 'tool-view');
  if (!input || typeof input !== 'object' || Array.isArray(input)) { box.appendChild(el('pre', 'json', capped(str(input))[0])); return box; }
  var p = input.file_path !== undefined ? input.file_path : input.path !== undefined ? input.path : input.notebook_path !== undefined ? input.notebook_path : input.filePath;
  var shown = [], rest;
  if (typeof input.command === 'string' || Array.isArray(input.command)) {
    box.appendChild(commandEl(input.command)); shown.push('command');
    if (typeof input.cwd === 'string') { box.appendChild(label('in')); box.appendChild(pathEl(input.cwd)); shown.push('cwd'); }
    if (typeof input.description === 'string') { box.appendChild(el('div', 'label', input.description)); shown.push('description'); }
    shown.push('commandActions');
  } else if (typeof input.old_string === 'string' && typeof input.new_string === 'string') {
    box.appendChild(pathEl(p)); box.appendChild(diffEl(diffOf(input.old_string, input.new_string)));
    shown.push('file_path', 'path', 'old_string', 'new_string');
  } else if (Array.isArray(input.edits) && p !== undefined) {
    box.appendChild(pathEl(p));
    input.edits.forEach(function(e){ if (e && typeof e === 'object') box.appendChild(diffEl(diffOf(e.old_string || e.oldText || '', e.new_string || e.newText || ''))); });
    shown.push('file_path', 'path', 'edits');
  } else if ((typeof input.oldText === 'string' || typeof input.newText === 'string') && p !== undefined) {
    box.appendChild(pathEl(p)); box.appendChild(diffEl(diffOf(input.oldText, input.newText)));
    shown.push('path', 'file_path', 'oldText', 'newText');
  } else if (typeof input.content === 'string' && p !== undefined) {
    box.appendChild(pathEl(p)); box.appendChild(el('span', 'kind', 'write')); box.appendChild(diffEl(splitLines(input.content).map(function(l){ return ['+', l]; })));
    shown.push('file_path', 'path', 'content');
  } else if (input.changes && typeof input.changes === 'object') {
    if (Array.isArray(input.changes)) input.changes.forEach(function(c){ if (c && typeof c === 'object') changeEls(box, c.path, c); });
    else Object.keys(input.changes).forEach(function(path){ var c = input.changes[path]; if (c && typeof c === 'object') changeEls(box, path, c); });
    shown.push('changes');
  } else if (p !== undefined) {
    box.appendChild(pathEl(p)); shown.push('file_path', 'path', 'notebook_path', 'filePath');
  } else {
    box.appendChild(el('pre', 'json', capped(str(input))[0]));
    return box;
  }
  rest = restEl(input, shown);
  if (rest) box.appendChild(rest);
  return box;
};
})(window.ase = window.ase || {});
`;
