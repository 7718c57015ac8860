/**
 * The web client at `/`: one page served by `ase serve`, no CDN and no build step (it works
 * offline). This file is its HTML; the style is inlined (page/style.ts), and the scripts are
 * files the server serves itself under /assets/ (page-assets.ts), each loaded with the page's CSP
 * nonce: markdown-it and xterm.js from node_modules, then the page's own (page/markdown.ts,
 * page/tool-view.ts, page/terminal-panel.ts, page/app-script.ts).
 */
import { PAGE_SCRIPTS, pageVendorCss } from './page-assets.js';
import { PAGE_CSS } from './page/style.js';

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
  <section id="terminal-panel" hidden>
    <h2>Terminal <small id="terminal-state"></small></h2>
    <div class="bar"><button id="terminal-take" class="primary" type="button">Take remote control</button><button id="terminal-zoom" type="button" aria-pressed="false">Actual size</button></div>
    <div id="terminal-screen"><div id="terminal-host"></div></div>
  </section>
  <section id="inspector" class="folded">
    <h2>Inspector <button id="inspector-toggle" type="button" aria-expanded="false" aria-controls="chart">Show</button> <small id="chart-state"></small></h2>
    <div id="chart"></div>
    <div id="scrubline"><input id="scrub" type="range" min="0" max="0" value="0" aria-label="replay to seq"><span id="scrub-label">live</span><button id="scrub-live" type="button">Live</button><button id="chart-fit" type="button">Fit</button></div>
    <div class="logs"><div><h2>Events</h2><ol id="events-log"></ol></div><div><h2>Effects</h2><ol id="effects-log"></ol></div></div>
  </section>
</main>
`;


export function renderPage(nonce: string): string {
  const scripts = PAGE_SCRIPTS.map((name) => `<script nonce="${nonce}" src="/assets/${name}"></script>`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>ase serve</title><link rel="icon" href="data:,"><style>${pageVendorCss()}${PAGE_CSS}</style></head>
<body>${BODY}${scripts}</body></html>
`;
}
