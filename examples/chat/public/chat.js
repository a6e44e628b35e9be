/* global document, window, fetch, TextDecoder, URL, setTimeout, console */
// The chat page, framework-free and served as it is (no build step). It does what AI SDK UI's
// useChat does with a resumed stream: reads the run's UI message stream (server-sent events of
// UIMessageChunk JSON, as createUIMessageStreamResponse sends them) into the parts of one
// assistant message, and renders them. Beside it, it polls the run's state for its effect calls
// and pending approvals. The run id is in the URL (?run=…), so a reload re-attaches to the run
// and replays its stream from the durable log: nothing shown twice, nothing lost.

const $ = (id) => document.getElementById(id);
const escape = (text) =>
  String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// The server takes a POST only as same-origin JSON (see same-origin-guard.ts).
const postJson = (path, body) =>
  fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** The run on screen: its id, its assistant message as the stream built it, its polled state. */
let run = null;

function newAssistantMessage() {
  // ended: the run closed without finishing (failed, cancelled): nothing more will come.
  return { parts: [], stepStart: 0, finished: false, ended: false, error: null };
}

/** Applies one UI message chunk to the message, as AI SDK's processUIMessageStream does. */
function applyChunk(message, chunk) {
  const { parts } = message;
  const last = (type, id) => parts.findLast((p) => p.type === type && (id === undefined || p.id === id));
  const tool = (toolCallId) => parts.find((p) => p.type === 'tool' && p.toolCallId === toolCallId);
  switch (chunk.type) {
    case 'start-step':
      message.stepStart = parts.length;
      break;
    case 'reset-step':
      // A retried step replaces what its failed attempt had streamed.
      parts.length = message.stepStart;
      break;
    case 'text-start':
      parts.push({ type: 'text', id: chunk.id, text: '', done: false });
      break;
    case 'text-delta': {
      const part = last('text', chunk.id) ?? (parts.push({ type: 'text', id: chunk.id, text: '' }), parts.at(-1));
      part.text += chunk.delta;
      break;
    }
    case 'text-end': {
      const part = last('text', chunk.id);
      if (part) part.done = true;
      break;
    }
    case 'tool-input-start':
      if (!tool(chunk.toolCallId)) parts.push({ type: 'tool', toolCallId: chunk.toolCallId, toolName: chunk.toolName });
      break;
    case 'tool-input-available': {
      const part = tool(chunk.toolCallId);
      if (part) part.input = chunk.input;
      else parts.push({ type: 'tool', toolCallId: chunk.toolCallId, toolName: chunk.toolName, input: chunk.input });
      break;
    }
    case 'tool-output-available':
    case 'tool-output-error':
    case 'tool-output-denied': {
      const part = tool(chunk.toolCallId);
      if (part)
        Object.assign(part, {
          output: chunk.output,
          errorText: chunk.errorText,
          denied: chunk.type.endsWith('denied'),
        });
      break;
    }
    case 'finish':
      message.finished = true;
      break;
    case 'error':
      message.error = chunk.errorText;
      // The run failed; only a stream that could not follow the run is worth reading again.
      if (!chunk.errorText.startsWith('The run stream stopped: ')) message.ended = true;
      break;
    case 'abort':
      message.ended = true;
      break;
    default:
      if (chunk.type.startsWith('data-') && !chunk.transient) {
        // Data parts with an id are reconciled by id (a newer outcome replaces the older one).
        const index = chunk.id === undefined ? -1 : parts.findIndex((p) => p.type === chunk.type && p.id === chunk.id);
        const part = { type: chunk.type, id: chunk.id, data: chunk.data };
        if (index >= 0) parts[index] = part;
        else parts.push(part);
      }
  }
}

/** Reads a UI message stream response (SSE `data: <json>` events, ending `data: [DONE]`). */
async function readChunks(response, onChunk) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of event.split('\n')) {
        if (!line.startsWith('data: ')) continue;
        const data = line.slice('data: '.length);
        if (data === '[DONE]') return;
        onChunk(JSON.parse(data));
      }
    }
  }
}

/** Follows the run's stream; a dropped connection is read again from the start into a fresh message. */
async function follow(current) {
  while (run === current && !current.assistant.finished && !current.assistant.ended) {
    try {
      const response = await fetch(`/api/runs/${current.workflowId}/stream`);
      if (!response.ok) throw new Error(`stream: HTTP ${response.status}`);
      current.assistant = newAssistantMessage();
      await readChunks(response, (chunk) => {
        if (run !== current) return;
        applyChunk(current.assistant, chunk);
        render();
      });
    } catch (error) {
      console.warn('chat: stream interrupted, reading it again', error);
    }
    if (!current.assistant.finished && !current.assistant.ended) await sleep(500);
  }
}

/** Polls the run's state (effects with outcomes, pending approvals, status) until it closes. */
async function pollState(current) {
  while (run === current) {
    try {
      const response = await fetch(`/api/runs/${current.workflowId}`);
      if (response.ok) current.state = await response.json();
    } catch (error) {
      console.warn('chat: state', error);
    }
    render();
    const over = current.assistant.finished || current.assistant.ended;
    if (current.state && current.state.status !== 'running' && over) return;
    await sleep(400);
  }
}

function attach(workflowId, message) {
  const url = new URL(window.location.href);
  url.searchParams.set('run', workflowId);
  window.history.replaceState(null, '', url);
  run = { workflowId, message, assistant: newAssistantMessage(), state: null, deciding: new Set() };
  render();
  void follow(run);
  void pollState(run);
}

/** The effect calls of the run: the polled report, completed by the stream's data-chamvi-effect parts. */
function effectsOf(current) {
  const byId = new Map();
  for (const part of current.assistant.parts) if (part.type === 'data-chamvi-effect') byId.set(part.id, part.data);
  for (const effect of current.state?.effects ?? []) byId.set(effect.toolCallId ?? effect.key, effect);
  return byId;
}

function toolCard(part, effects, current) {
  const effect = effects.get(part.toolCallId);
  const pending = (current.state?.pending ?? []).find((p) => p.toolCallId === part.toolCallId);
  const input = part.input ?? pending?.input;
  const outcome = effect?.outcome ?? (pending ? 'waiting for approval' : 'running');
  const cls = effect?.outcome ?? (pending ? 'waiting' : '');
  let html = `<div class="tool" data-testid="tool-${escape(part.toolCallId)}" data-outcome="${escape(effect?.outcome ?? '')}">`;
  html += `<strong>${escape(part.toolName)}</strong> <span class="outcome ${escape(cls)}">${escape(outcome)}</span>`;
  if (effect) html += ` <small>${effect.attempts} attempt${effect.attempts === 1 ? '' : 's'}</small>`;
  if (input?.issue !== undefined) html += `<div>on issue #${escape(input.issue)}: “${escape(input.body ?? '')}”</div>`;
  if (effect?.error) html += `<div class="error">${escape(effect.error.message)}</div>`;
  if (effect?.reason) html += `<div>${escape(effect.reason)}</div>`;
  if (pending && !effect) {
    const disabled = current.deciding.has(part.toolCallId) ? ' disabled' : '';
    html += `<div><code>key ${escape(pending.key)}</code></div>`;
    html += `<button type="button" data-action="approve" data-call="${escape(part.toolCallId)}"${disabled}>Approve</button>`;
    html += `<button type="button" data-action="deny" data-call="${escape(part.toolCallId)}"${disabled}>Deny</button>`;
  }
  return `${html}</div>`;
}

let shown = '';
function render() {
  if (!run) return;
  const current = run;
  const effects = effectsOf(current);
  const message = current.message || current.state?.message || '';
  let html = message ? `<div class="message user">${escape(message)}</div>` : '';
  const streaming = !current.assistant.finished && !current.assistant.ended;
  html += `<div class="message assistant${streaming ? ' streaming' : ''}" data-testid="assistant">`;
  for (const part of current.assistant.parts) {
    if (part.type === 'text') html += `<span class="text">${escape(part.text)}</span>`;
    else if (part.type === 'tool') html += toolCard(part, effects, current);
  }
  if (current.assistant.error) html += `<div class="error">${escape(current.assistant.error)}</div>`;
  if (current.state?.error) html += `<div class="error">${escape(current.state.error)}</div>`;
  html += '</div>';
  // Only touch the DOM when something changed, so a button is not replaced under the pointer.
  if (html !== shown) $('messages').innerHTML = shown = html;
  $('run-id').textContent = current.workflowId;
  const status = current.state?.status ?? '…';
  $('run-status').textContent = current.state?.stale ? `${status} (waiting for a worker)` : status;
  $('run-status').dataset.status = status;
  $('run-step').textContent = current.state ? String(current.state.step) : '–';
  $('effects').tBodies[0].innerHTML = [...effects.values()]
    .map(
      (e) =>
        `<tr><td>${escape(e.toolName)}</td><td><span class="outcome ${escape(e.outcome)}">${escape(e.outcome)}</span></td><td>${e.attempts}</td></tr>`,
    )
    .join('');
}

async function decide(toolCallId, approved) {
  const current = run;
  current.deciding.add(toolCallId);
  render();
  const response = await postJson(`/api/runs/${current.workflowId}/approvals/${toolCallId}`, { approved });
  if (!response.ok) {
    current.deciding.delete(toolCallId);
    console.warn('chat: decision refused', await response.text());
  }
  render();
}

async function pollInfo() {
  for (;;) {
    try {
      const info = await (await fetch('/api/info')).json();
      $('worker-pid').textContent = info.worker?.pid ? `pid ${info.worker.pid}` : 'restarting…';
      $('worker-restarts').textContent = String(info.worker?.restarts ?? 0);
      $('crash-after-comment').textContent = info.worker?.crashArmed ? 'Crash armed' : 'Crash after next comment';
      $('crash-after-comment').dataset.armed = String(Boolean(info.worker?.crashArmed));
      $('issues').innerHTML = info.issues
        .map(
          (i) =>
            `<li>#${i.number} ${escape(i.title)}: <strong data-testid="issue-${i.number}-comments">${i.comments}</strong> comment${i.comments === 1 ? '' : 's'}</li>`,
        )
        .join('');
    } catch (error) {
      console.warn('chat: info', error);
    }
    await sleep(1000);
  }
}

$('composer').addEventListener('submit', async (event) => {
  event.preventDefault();
  const message = $('message').value.trim();
  if (!message) return;
  const response = await postJson('/api/runs', { message });
  const { workflowId } = await response.json();
  attach(workflowId, message);
});
$('messages').addEventListener('click', (event) => {
  const button = event.target.closest('button[data-action]');
  if (button) void decide(button.dataset.call, button.dataset.action === 'approve');
});
$('kill-worker').addEventListener('click', () => void postJson('/api/worker/kill', {}));
$('crash-after-comment').addEventListener('click', async () => {
  await postJson('/api/worker/crash-after-comment', {});
  $('crash-after-comment').textContent = 'Crash armed';
  $('crash-after-comment').dataset.armed = 'true';
});

const resumed = new URL(window.location.href).searchParams.get('run');
if (resumed) attach(resumed, '');
void pollInfo();
