/**
 * The page's stylesheet, inlined into `/` (the CSP allows inline styles, not style files). Laid out
 * for a desk (three columns) and a phone (one column under 900 px, the inspector folded behind a
 * toggle). Nothing may be wider than its card: long commands, paths and diffs wrap, and a long one
 * scrolls inside its own box, so a permission is never approved on text the person cannot read.
 */
export const PAGE_CSS = String.raw`
*{box-sizing:border-box}[hidden]{display:none!important}body{margin:0;font:14px/1.4 system-ui,sans-serif;color:#1d2430;background:#f3f4f7}
header{display:flex;gap:8px;align-items:center;padding:8px 12px;background:#1f2a44;color:#fff;flex-wrap:wrap}
header h1{font-size:16px;margin:0 12px 0 0}header form{display:flex;gap:6px;flex-wrap:wrap;align-items:center;min-width:0}
input,select,textarea,button{font:inherit;max-width:100%}input,select,textarea{padding:5px 7px;border:1px solid #b9bfcc;border-radius:6px;background:#fff;color:#1d2430}
button{padding:5px 10px;border:1px solid #8a93a6;border-radius:6px;background:#fff;cursor:pointer}button.primary{background:#2f6fed;color:#fff;border-color:#2f6fed}
button.allow{background:#1a7f37;color:#fff;border-color:#1a7f37}button.deny{background:#c62828;color:#fff;border-color:#c62828}
main{display:grid;grid-template-columns:220px minmax(0,1fr) minmax(0,1fr);gap:10px;padding:10px;height:calc(100vh - 52px)}
section{background:#fff;border:1px solid #dde1ea;border-radius:8px;padding:8px;overflow:auto;min-height:0;min-width:0}
h2{font-size:13px;text-transform:uppercase;letter-spacing:.04em;color:#5a6477;margin:2px 0 8px}
#session-title,#chart-state{text-transform:none;letter-spacing:normal;font:12px ui-monospace,monospace;color:#1d2430;overflow-wrap:anywhere}
#sessions ul{list-style:none;margin:0;padding:0}#sessions li{padding:6px;border-radius:6px;cursor:pointer;border:1px solid transparent;word-break:break-all}
#sessions li.current{border-color:#2f6fed;background:#eef3ff}#sessions li small{display:block;color:#6a7385}
#sessions li.sub::before{content:"\21b3  ";color:#9aa3b5}
#tree{font-size:12px}#tree-nodes{display:flex;gap:4px;flex-wrap:wrap}#tree .node{padding:2px 6px;border:1px solid #dde1ea;border-radius:6px;background:#f6f7fa;cursor:pointer}
#tree .node.focus{border-color:#e0a100;background:#fff6db;font-weight:600}#tree .node.viewed{outline:2px solid #2f6fed}
#tree .node.completed{color:#9aa3b5}#tree button{padding:1px 6px;font-size:12px}
#focus-moved{margin:4px 0;padding:4px 8px;border:1px solid #e0a100;border-radius:6px;background:#fff6db;font-size:13px}
#chat{display:flex;flex-direction:column}#transcript{flex:1;overflow:auto;min-height:120px}
.entry{margin:4px 0;padding:6px 8px;border-radius:8px;background:#f6f7fa;white-space:pre-wrap;overflow-wrap:anywhere;min-width:0}
.entry.user{background:#e7efff;margin-left:15%}.entry.assistant,.live-text{background:#f1f8ee;margin-right:10%}.live-text{opacity:.8;border:1px dashed #9cc59a}
.entry.tool{font-size:12px;background:#fff8e6}.entry.meta{font-size:12px;color:#6a7385;background:none;padding:2px 8px}
.entry .seq{float:right;color:#9aa3b5;font-size:11px;margin-left:6px}
.prompt{border:2px solid #e0a100;background:#fff6db;border-radius:8px;padding:8px;margin:6px 0;min-width:0;max-width:100%}
.bar{display:flex;gap:6px;align-items:center;flex-wrap:wrap;margin-top:6px}
#message{flex:1;min-width:160px;height:44px;resize:vertical}#status{font-size:12px;color:#5a6477;overflow-wrap:anywhere}
/* Tool inputs as what they are (tool-view.ts): a command, a path, a diff. */
.tool-view{white-space:normal;min-width:0}.tool-view .label{font-size:11px;color:#6a7385;margin-top:4px}
.tool-view pre{margin:4px 0;padding:6px 8px;white-space:pre-wrap;overflow-wrap:anywhere;max-height:40vh;overflow:auto;font:12px/1.45 ui-monospace,monospace;background:#fff;border:1px solid #e4dcc0;border-radius:6px}
.tool-view pre.cmd{background:#1f2430;color:#e8ecf3;border-color:#1f2430}.tool-view pre.cmd::before{content:"$ ";color:#8f9bb3}
.tool-view .path{display:inline-block;max-width:100%;font:12px ui-monospace,monospace;background:#eef1f6;border-radius:4px;padding:1px 5px;overflow-wrap:anywhere}
.tool-view .kind{font-size:11px;color:#6a7385;margin-left:6px}
.tool-view pre.diff{padding:4px 0}.diff span{display:block;padding:0 8px}.diff .add{background:#e6ffec;color:#116329}.diff .del{background:#ffebe9;color:#82071e}.diff .hunk{color:#6a7385;background:#f3f4f7}
.tool-view .more{font-size:11px;color:#6a7385}.tool-view dl{margin:4px 0;display:grid;grid-template-columns:auto minmax(0,1fr);gap:2px 8px;font-size:12px}
.tool-view dt{color:#6a7385}.tool-view dd{margin:0;font-family:ui-monospace,monospace;overflow-wrap:anywhere;white-space:pre-wrap}
/* The agent's Markdown (markdown.ts). */
.md{white-space:normal}.md>:first-child{margin-top:0}.md>:last-child{margin-bottom:0}.md p{margin:0 0 6px}
.md pre{white-space:pre;overflow:auto;max-width:100%;background:#fff;border:1px solid #dde1ea;border-radius:6px;padding:6px 8px;font-size:12px}
.md code{font:12px ui-monospace,monospace;background:rgba(0,0,0,.05);border-radius:3px;padding:0 3px}.md pre code{background:none;padding:0}
.md table{display:block;overflow:auto;border-collapse:collapse}.md td,.md th{border:1px solid #dde1ea;padding:2px 6px}
.md blockquote{margin:0 0 6px;padding-left:8px;border-left:3px solid #c9d1e0;color:#4a5468}.md ul,.md ol{margin:0 0 6px;padding-left:22px}
.md h1,.md h2,.md h3,.md h4{font-size:15px;text-transform:none;letter-spacing:normal;color:#1d2430;margin:6px 0 4px}
#inspector{display:flex;flex-direction:column;gap:6px}#chart{overflow:auto;border:1px solid #e4e7ee;border-radius:6px;min-height:160px;background:#fcfcfe}
#chart svg{max-width:none}#chart.fit svg{width:100%;height:auto}.logs{display:grid;grid-template-columns:1fr 1fr;gap:6px;min-height:0}
.logs ol{margin:0;padding-left:4px;list-style:none;font:11px/1.35 ui-monospace,monospace;max-height:180px;overflow:auto}
#scrubline{display:flex;gap:6px;align-items:center}#scrub{flex:1;min-width:0}
#inspector-toggle{display:none}
/* The terminal panel (terminal-panel.ts): beside the transcript, the inspector under it; the PTY's screen scaled to the width. */
main.with-terminal{grid-template-columns:200px minmax(0,1fr) minmax(0,1.6fr);grid-template-rows:auto minmax(0,1fr)}
main.with-terminal #sessions,main.with-terminal #chat{grid-row:1 / span 2}main.with-terminal #terminal-panel{grid-column:3;grid-row:1}main.with-terminal #inspector{grid-column:3;grid-row:2}
#terminal-state{text-transform:none;letter-spacing:normal;font-weight:normal}#terminal-panel .bar{margin:0 0 6px}
#terminal-screen{position:relative;overflow:hidden;background:#1f2430;border-radius:6px;min-height:40px}#terminal-host{position:absolute;top:0;left:0;transform-origin:0 0}
#terminal-screen.actual{overflow:auto;max-height:70vh}#terminal-screen.actual #terminal-host{position:relative}
@media (max-width:900px){
  main,main.with-terminal{grid-template-columns:minmax(0,1fr);grid-template-rows:none;height:auto}
  main.with-terminal>section{grid-column:auto!important;grid-row:auto!important}#transcript{max-height:55vh}section{max-height:none}.logs{grid-template-columns:1fr}
  .entry.user{margin-left:8%}.entry.assistant,.live-text{margin-right:0}
  /* The inspector folds away on a phone: one tap opens it. */
  #inspector-toggle{display:inline-block;padding:2px 8px;font-size:12px;margin-left:6px;text-transform:none;letter-spacing:normal}
  #inspector.folded>:not(h2){display:none!important}
}
`;
