/**
 * The page's Markdown for the agent's text, in the browser: markdown-it (served by the server from
 * node_modules as /assets/markdown-it.js, see page-assets.ts) with raw HTML off, so `<script>`,
 * `<img onerror>` and the like in an agent's answer come out as text. Links are kept only for
 * http(s) and mailto (markdown-it already refuses javascript:, vbscript:, file: and data:) and open
 * in a new tab without a referrer; images are not rendered (a remote image is a beacon: the
 * link text stays). What markdown-it returns is checked once more against the tags it can produce,
 * so a parser bug cannot smuggle an element or an event handler in.
 */
export const MARKDOWN_SCRIPT = String.raw`
(function(ase){
'use strict';
var md = window.markdownit({ html: false, linkify: true, typographer: false });
md.disable('image');
var baseValidate = md.validateLink;
md.validateLink = function(url){
  var scheme = /^\s*([a-z][a-z0-9+.-]*):/i.exec(url);
  if (scheme) return /^(https?|mailto)$/i.test(scheme[1]) && baseValidate(url);
  return baseValidate(url);
};
var renderToken = function(tokens, idx, options, env, self){ return self.renderToken(tokens, idx, options); };
md.renderer.rules.link_open = function(tokens, idx, options, env, self){
  tokens[idx].attrSet('target', '_blank');
  tokens[idx].attrSet('rel', 'noopener noreferrer nofollow');
  return renderToken(tokens, idx, options, env, self);
};
// What markdown-it's own rules emit (html off), and the attributes they carry.
var TAGS = /^(P|EM|STRONG|S|DEL|CODE|PRE|BLOCKQUOTE|UL|OL|LI|H[1-6]|HR|BR|A|TABLE|THEAD|TBODY|TR|TH|TD)$/;
var ATTRS = { href: 1, title: 1, target: 1, rel: 1, start: 1, style: 1, 'class': 1 };
function scrub(node){
  Array.prototype.slice.call(node.children).forEach(function(child){
    if (!TAGS.test(child.tagName)) { child.replaceWith(document.createTextNode(child.textContent)); return; }
    Array.prototype.slice.call(child.attributes).forEach(function(a){
      var name = a.name.toLowerCase();
      if (!ATTRS[name] || (name === 'href' && !/^(https?:|mailto:|#|\/|[^:]*$)/i.test(a.value.trim())) || (name === 'style' && !/^text-align:(left|right|center)$/.test(a.value))) child.removeAttribute(a.name);
    });
    scrub(child);
  });
}
/** The agent's text as a Markdown block (a div.md). */
ase.renderMarkdown = function(text){
  // Parsed in an inert template (nothing loads or runs there), checked, then moved into the page.
  var inert = document.createElement('template');
  inert.innerHTML = md.render(String(text));
  scrub(inert.content);
  var box = document.createElement('div');
  box.className = 'md';
  box.appendChild(inert.content);
  return box;
};
})(window.ase = window.ase || {});
`;
