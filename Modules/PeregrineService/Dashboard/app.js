// Peregrine's dashboard: the download lists of a running `peregrine daemon`, live.
//
// Everything the service sends is shown with textContent (never as markup). The secret is
// typed in or read from the address's fragment (#secret=…, which browsers never send), kept in
// sessionStorage at most, and sent only inside RPC bodies and an Authorization header.

import { RPCClient, RPCError, NotificationSocket } from './rpc.js';
import { VirtualList } from './virtual-list.js';
import { SpeedGraph } from './graph.js';
import { icon } from './icons.js';
import * as format from './format.js';

const $ = (id) => document.getElementById(id);
const ROW_HEIGHT = 56;
// `peregrine.holder`: the service holding a task of a fleet's queue (absent elsewhere).
const STATUS_KEYS = ['gid', 'status', 'totalLength', 'completedLength', 'downloadSpeed', 'peregrine.holder'];
const ACTIONS = [
  ['pause', 'Pause', 'pause', false],
  ['resume', 'Resume', 'resume', false],
  ['stop', 'Stop', 'stop', true],
  ['restart', 'Restart', 'restart', true],
  ['trash', 'Delete to trash', 'trash', true],
  ['delete', 'Delete for good', 'delete', true],
  ['error', 'Show the error', 'error', false],
];
// On a fleet service the list is the shared queue: one order, no sections, no trash; a task
// is paused, resumed (retried when it failed) or removed from the queue, whoever holds it.
const FLEET_ACTIONS = [
  ['pause', 'Pause', 'pause', false],
  ['resume', 'Resume', 'resume', false],
  ['remove', 'Remove from the queue', 'delete', true],
  ['error', 'Show the error', 'error', false],
];
const SECRET_KEY = 'peregrine.secret';

const state = {
  client: null,
  secret: null,
  lists: [''],
  list: '',
  tab: 'list',
  view: null,
  items: [],
  rows: new Map(),
  trash: [],
  revision: -1,
  active: new Set(),
  pending: new Set(),
  focus: 0,
  trashFocus: 0,
  firstRender: false,
  tickTimer: 0,
  flushTimer: 0,
  loading: null,
  dragging: null,
  fleet: false,
};

/** The row actions of the list shown: a fleet's queue has fewer. */
function rowActions() {
  return state.fleet ? FLEET_ACTIONS : ACTIONS;
}

// Measured by Benchmarks/p11.sh and shown nowhere.
const metrics = { firstRender: null, listBytes: 0, longestUpdate: 0, updates: 0, listRequested: undefined };
window.peregrineMetrics = metrics;

// MARK: Errors

function showError(error) {
  const message = error instanceof Error ? error.message : String(error);
  $('error-text').textContent = message;
  $('error-banner').hidden = false;
}

async function attempt(work) {
  try {
    return await work();
  } catch (error) {
    if (error instanceof RPCError && error.code === 1 && error.message === 'Unauthorized') {
      signOut('The service no longer accepts the secret.');
      return undefined;
    }
    showError(error);
    return undefined;
  }
}

// MARK: Login

async function start() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  let secret = fragment.get('secret');
  // The fragment never reaches the server; it leaves the address bar and the history too.
  if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  let refusal = '';
  if (secret === null) secret = sessionStorage.getItem(SECRET_KEY);
  if (secret !== null) {
    refusal = await tryLogin(secret);
    if (refusal === null) return;
  } else {
    // A service without a secret needs no sign-in.
    const open = await tryLogin(null);
    if (open === null) return;
  }
  showLogin(refusal);
}

/** Signs in with `secret`: null when it worked, else why not. */
async function tryLogin(secret) {
  const client = new RPCClient(secret);
  let view;
  try {
    // The list itself checks the secret: no round trip before the first render. The first
    // frame waits for four screenfuls of rows only (every section's count comes with them, so
    // the list has its full height); the whole list follows at once (enterApp).
    view = await fetchView(client, '', 4 * Math.ceil(Math.max(window.innerHeight, 1080) / ROW_HEIGHT));
  } catch (error) {
    if (error.code === 1) return 'The secret is wrong.';
    return error.message;
  }
  state.client = client;
  state.secret = secret;
  if (secret !== null) sessionStorage.setItem(SECRET_KEY, secret);
  await enterApp(view);
  return null;
}

function showLogin(message) {
  $('app').hidden = true;
  $('login').hidden = false;
  $('login-error').textContent = message || '';
  $('login-secret').focus();
}

function signOut(message) {
  sessionStorage.removeItem(SECRET_KEY);
  state.client = null;
  state.secret = null;
  if (state.socket) state.socket.close();
  clearTimeout(state.tickTimer);
  showLogin(message);
}

$('login-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = $('login-secret');
  $('login-submit').disabled = true;
  $('login-error').textContent = '';
  const refusal = await tryLogin(input.value);
  $('login-submit').disabled = false;
  if (refusal !== null) {
    $('login-error').textContent = refusal;
    input.select();
  } else {
    input.value = '';
  }
});

$('logout').addEventListener('click', () => signOut(''));
$('error-close').addEventListener('click', () => {
  $('error-banner').hidden = true;
});

// MARK: The application

let listView;
let trashView;
let graph;

async function enterApp(view) {
  $('login').hidden = true;
  $('app').hidden = false;
  if (!listView) {
    listView = new VirtualList($('list-scroller'), $('list-spacer'), ROW_HEIGHT, {
      create: createElement,
      render: renderListElement,
    });
    trashView = new VirtualList($('trash-scroller'), $('trash-spacer'), ROW_HEIGHT, {
      create: createElement,
      render: renderTrashElement,
    });
    graph = new SpeedGraph($('speed-graph'));
  }
  let connectedBefore = false;
  state.socket = new NotificationSocket(onNotification, (live) => {
    $('connection').classList.toggle('live', live);
    $('connection').title = live ? 'Live updates: connected' : 'Live updates: reconnecting';
    // Whatever happened while the socket was down: ask again. Not on its first connection:
    // the list has just come, and the once-a-second round catches what moved since.
    if (live && connectedBefore && state.view) refreshAll();
    if (live) connectedBefore = true;
  });
  state.socket.open();
  state.list = '';
  state.tab = 'list';
  renderTabs();
  applyView(view);
  // The rest after the first render: the rows the first answer left out, the lists, the limits.
  if (view.complete === false) loadList();
  await attempt(async () => {
    const [lists, options] = await state.client.multicall([['peregrine.lists'], ['aria2.getGlobalOption']]);
    if (Array.isArray(lists)) state.lists = lists;
    if (!(options instanceof RPCError)) showLimits(options);
  });
  renderTabs();
  tick();
}

function refreshAll() {
  loadList();
  if (state.tab === 'trash') loadTrash();
}

// MARK: Tabs

function listTitle(name) {
  return name === '' ? 'Downloads' : name;
}

function renderTabs() {
  const tabs = $('tabs');
  const buttons = [];
  for (const name of state.lists) buttons.push(tabButton(state.fleet ? 'Fleet queue' : listTitle(name), 'list', name));
  if (!state.fleet) buttons.push(tabButton('Trash', 'trash', state.list));
  tabs.replaceChildren(...buttons);
  const names = $('list-names');
  names.replaceChildren(
    ...state.lists.filter((name) => name !== '').map((name) => {
      const option = document.createElement('option');
      option.value = name;
      return option;
    }),
  );
}

function tabButton(title, tab, list) {
  const button = document.createElement('button');
  button.type = 'button';
  button.setAttribute('role', 'tab');
  button.textContent = title;
  button.dataset.tab = tab;
  button.dataset.list = list;
  const selected = state.tab === tab && (tab === 'trash' || state.list === list);
  button.setAttribute('aria-selected', String(selected));
  button.tabIndex = selected ? 0 : -1;
  button.addEventListener('click', () => selectTab(tab, tab === 'trash' ? state.list : list));
  return button;
}

$('tabs').addEventListener('keydown', (event) => {
  if (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft') return;
  const buttons = [...$('tabs').querySelectorAll('button')];
  const index = buttons.indexOf(document.activeElement);
  if (index < 0) return;
  const next = buttons[(index + (event.key === 'ArrowRight' ? 1 : buttons.length - 1)) % buttons.length];
  next.focus();
  next.click();
});

async function selectTab(tab, list) {
  state.tab = tab;
  if (list !== state.list) {
    state.list = list;
    state.focus = 0;
  }
  renderTabs();
  $('list-panel').hidden = tab !== 'list';
  $('trash-panel').hidden = tab !== 'trash';
  const selected = $('tabs').querySelector('[aria-selected=true]');
  if (selected) selected.focus();
  if (tab === 'list') await loadList();
  else await loadTrash();
}

// MARK: Loading

/** A row from `listView` (an array in the order of its `fields`) or `trashView` (an object). */
function rowFrom(value) {
  // A fleet's rows carry the service holding the task last; trash rows (objects) their URL.
  const [gid, name, status, total, done, kind, speed, holder] = Array.isArray(value)
    ? value
    : [value.gid, value.name, value.status, value.total, value.done, value.kind, value.speed, value.holder];
  return {
    gid,
    url: Array.isArray(value) ? undefined : value.url,
    holder: holder || '',
    name,
    status,
    total: Number(total) || 0,
    done: Number(done) || 0,
    kind: kind || 'Other',
    speed: Number(speed) || 0,
  };
}

/** Asks for the current list (coalesced: one request at a time, one more if asked meanwhile). */
function loadList() {
  if (state.loading) {
    state.reloadAfter = true;
    return state.loading;
  }
  state.loading = attempt(async () => {
    const list = state.list;
    const view = await fetchView(state.client, list);
    if (list === state.list) applyView(view);
  }).finally(() => {
    state.loading = null;
    if (state.reloadAfter) {
      state.reloadAfter = false;
      loadList();
    }
  });
  return state.loading;
}

/**
 * `peregrine.listView(list[, rows])`, read as text first (the first time, timed for P11); with
 * `rows`, only the list's first rows (and every section's count).
 */
async function fetchView(client, list, rows) {
  const first = metrics.listRequested === undefined;
  // The page's inline script asked for the first rows already, with the same secret: take
  // that answer (once).
  const early = window.peregrineFirstView;
  window.peregrineFirstView = null;
  const prefetched = first && early && early.secret === client.secret && list === '';
  if (first) metrics.listRequested = prefetched ? early.requested : performance.now();
  const request = prefetched
    ? early.answer
    : fetch('/jsonrpc', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'peregrine.listView',
          params: client.withToken(rows === undefined ? [list] : [list, rows]),
        }),
        cache: 'no-store',
        credentials: 'omit',
      }).then((response) => response.text().then((text) => ({ status: response.status, text })));
  const response = await request.catch((error) => {
    throw new RPCError(0, `The service cannot be reached (${error.message}).`);
  });
  const text = response.text;
  if (first) {
    metrics.listReceived = performance.now();
    metrics.firstBytes = text.length;
  }
  metrics.listBytes = text.length;
  let answer;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new RPCError(response.status, `The service answered HTTP ${response.status}.`);
  }
  if (answer.error) throw new RPCError(answer.error.code, answer.error.message);
  return answer.result;
}

function applyView(view) {
  const focusedGID = state.items[state.focus] && state.items[state.focus].gid;
  state.view = view;
  state.revision = Math.max(state.revision, view.revision);
  if (Boolean(view.fleet) !== state.fleet) {
    state.fleet = Boolean(view.fleet);
    renderTabs();
  }
  const items = [];
  const rows = new Map();
  const active = new Set();
  let total = 0;
  view.sections.forEach((section, sectionIndex) => {
    const showHeader = view.sections.length > 1 || section.title !== '' || view.sortType === 'manual';
    const count = section.count ?? section.downloads.length;
    if (showHeader) {
      items.push({ header: true, section: sectionIndex, title: section.title, count });
    }
    section.downloads.forEach((object, item) => {
      const row = rowFrom(object);
      rows.set(row.gid, row);
      if (row.status === 'active') active.add(row.gid);
      items.push({ gid: row.gid, section: sectionIndex, item });
    });
    // Rows a partial view left out: placeholders until the whole list comes.
    for (let item = section.downloads.length; item < count; item += 1) {
      items.push({ placeholder: true, section: sectionIndex, item });
    }
    total += count;
  });
  state.items = items;
  state.rows = rows;
  state.active = active;
  if (focusedGID) {
    const index = items.findIndex((entry) => entry.gid === focusedGID);
    if (index >= 0) state.focus = index;
  }
  state.focus = Math.min(state.focus, Math.max(0, items.length - 1));
  renderToolbar();
  const count = total;
  if (state.fleet) {
    const all = view.queueTotal ?? count;
    $('list-summary').textContent =
      `${all} download${all === 1 ? '' : 's'} in the fleet's queue` + (all > count ? `, the first ${count} shown` : '');
  } else {
    $('list-summary').textContent =
      `${count} download${count === 1 ? '' : 's'} in ${view.sections.length} section${view.sections.length === 1 ? '' : 's'}`;
  }
  listView.setCount(items.length);
  listView.paint();
  if (!state.firstRender) {
    metrics.painted = performance.now();
    state.firstRender = true;
    // After the frame with the rows: the second animation frame starts once it was produced.
    requestAnimationFrame(() =>
      requestAnimationFrame(() => {
        metrics.firstRender = performance.now();
        performance.mark('peregrine-first-render');
      }),
    );
  }
  if (view.complete !== false && metrics.wholeList === undefined) {
    metrics.wholeListPainted = performance.now();
    requestAnimationFrame(() =>
      requestAnimationFrame(() => {
        metrics.wholeList = performance.now();
        // Ready (for tests and P11) once every row is in, not only the first screenfuls.
        document.body.dataset.ready = 'true';
      }),
    );
  }
}

async function loadTrash() {
  await attempt(async () => {
    const rows = await state.client.call('peregrine.trashView', state.list);
    state.trash = rows.map(rowFrom);
    state.trashFocus = Math.min(state.trashFocus, Math.max(0, state.trash.length - 1));
    const count = state.trash.length;
    $('trash-summary').textContent = `${count} download${count === 1 ? '' : 's'} in the trash`;
    $('trash-empty').disabled = count === 0;
    trashView.setCount(count);
    trashView.paint();
  });
}

// MARK: Toolbar

function renderToolbar() {
  const view = state.view;
  $('sort-type').value = view.sortType;
  $('sort-order').value = view.sortOrder;
  $('sort-order').disabled = view.sortType === 'manual';
  $('sec-addTime').checked = view.sectioning.addTime;
  $('sec-fileSize').checked = view.sectioning.fileSize;
  $('sec-fileNameIndex').checked = view.sectioning.fileNameIndex;
  const manual = view.sortType === 'manual';
  // A fleet's queue has one order and no lists, sections or paused additions.
  const listModel = ['sort-type-label', 'sort-order-label', 'sectioning'];
  for (const id of [...listModel, 'add-list-label', 'add-section-label', 'add-paused-label']) {
    $(id).hidden = state.fleet;
  }
  $('add-section').hidden = !manual;
  $('list-scroller').classList.toggle('manual', manual);
  // The add form's sections: only a list in manual mode has sections to choose.
  const choice = $('add-section-choice');
  const targetList = $('add-list').value.trim();
  const sections = manual && targetList === state.list ? view.sections : [];
  const previous = choice.value;
  choice.replaceChildren(
    ...sections.map((section, index) => {
      const option = document.createElement('option');
      option.value = String(index);
      option.textContent = section.title || `Section ${index + 1}`;
      return option;
    }),
  );
  choice.disabled = sections.length === 0;
  if (previous !== '' && Number(previous) < sections.length) choice.value = previous;
  else if (sections.length > 0) choice.value = String(sections.length - 1);
}

$('sort-type').addEventListener('change', () =>
  changeList('peregrine.setSort', $('sort-type').value, $('sort-order').value, state.list),
);
$('sort-order').addEventListener('change', () =>
  changeList('peregrine.setSort', $('sort-type').value, $('sort-order').value, state.list),
);
for (const name of ['addTime', 'fileSize', 'fileNameIndex']) {
  $(`sec-${name}`).addEventListener('change', (event) =>
    changeList('peregrine.setSectioning', { [name]: event.target.checked }, state.list),
  );
}
$('add-section').addEventListener('click', async () => {
  const title = await askTitle('New section', '');
  if (title === null) return;
  await changeList('peregrine.insertSection', state.view.sections.length, title, state.list);
});

async function changeList(method, ...params) {
  await attempt(() => state.client.call(method, ...params));
  await loadList();
}

// MARK: Rows

function createElement() {
  const element = document.createElement('div');
  element.setAttribute('role', 'row');
  const refs = { shown: {} };

  refs.title = document.createElement('span');
  refs.title.className = 'title';
  refs.count = document.createElement('span');
  refs.count.className = 'count';
  refs.rename = document.createElement('button');
  refs.rename.type = 'button';
  refs.rename.className = 'quiet';
  refs.rename.dataset.action = 'rename';
  refs.rename.textContent = 'Rename';

  refs.handle = document.createElement('span');
  refs.handle.className = 'handle';
  refs.handle.title = 'Drag to move (or Alt+↑/↓)';
  refs.handle.append(icon('grip'));
  refs.icon = document.createElement('span');
  refs.icon.className = 'icon';
  refs.kind = document.createElement('span');
  refs.kind.className = 'kind';
  refs.image = document.createElement('img');
  refs.image.alt = '';
  refs.image.hidden = true;
  refs.icon.append(refs.kind, refs.image);
  refs.main = document.createElement('span');
  refs.main.className = 'main';
  refs.name = document.createElement('span');
  refs.name.className = 'name';
  refs.meta = document.createElement('span');
  refs.meta.className = 'meta';
  refs.status = document.createElement('span');
  refs.status.className = 'status';
  refs.percent = document.createElement('span');
  refs.percent.className = 'percent';
  refs.speed = document.createElement('span');
  refs.speed.className = 'speed-cell';
  refs.eta = document.createElement('span');
  refs.eta.className = 'eta';
  refs.size = document.createElement('span');
  refs.size.className = 'size';
  refs.holder = document.createElement('span');
  refs.holder.className = 'holder';
  refs.meta.append(refs.status, refs.percent, refs.speed, refs.eta, refs.size, refs.holder);
  refs.bar = document.createElement('div');
  refs.bar.className = 'bar';
  refs.fill = document.createElement('div');
  refs.bar.append(refs.fill);
  refs.main.append(refs.name, refs.meta, refs.bar);
  refs.actions = document.createElement('span');
  refs.actions.className = 'actions';
  refs.buttons = {};
  for (const [action, label, iconName, secondary] of [...ACTIONS, ...FLEET_ACTIONS]) {
    if (refs.buttons[action]) continue;
    const button = document.createElement('button');
    button.type = 'button';
    button.dataset.action = action;
    button.title = label;
    button.setAttribute('aria-label', label);
    if (secondary) button.classList.add('secondary');
    button.append(icon(iconName));
    refs.buttons[action] = button;
    refs.actions.append(button);
  }
  const more = document.createElement('button');
  more.type = 'button';
  more.dataset.action = 'more';
  more.className = 'more';
  more.title = 'More actions';
  more.setAttribute('aria-label', 'More actions');
  more.setAttribute('aria-haspopup', 'menu');
  more.append(icon('more'));
  refs.actions.append(more);
  refs.more = more;
  refs.restore = document.createElement('button');
  refs.restore.type = 'button';
  refs.restore.dataset.action = 'restore';
  refs.restore.title = 'Restore';
  refs.restore.setAttribute('aria-label', 'Restore');
  refs.restore.append(icon('restore'));
  refs.cleanup = document.createElement('button');
  refs.cleanup.type = 'button';
  refs.cleanup.dataset.action = 'cleanup';
  refs.cleanup.title = 'Clean up (delete for good)';
  refs.cleanup.setAttribute('aria-label', 'Clean up');
  refs.cleanup.append(icon('delete'));

  element.append(refs.title, refs.count, refs.rename, refs.handle, refs.icon, refs.main, refs.actions);
  element.refs = refs;
  element.kind = '';
  return element;
}

function setText(refs, key, node, value) {
  if (refs.shown[key] === value) return;
  refs.shown[key] = value;
  node.textContent = value;
}

function setFlag(refs, key, apply, value) {
  if (refs.shown[key] === value) return;
  refs.shown[key] = value;
  apply(value);
}

function becomeSection(element) {
  if (element.kind === 'section') return;
  element.kind = 'section';
  element.className = 'section';
  const refs = element.refs;
  refs.shown = {};
  for (const node of [refs.handle, refs.icon, refs.main, refs.actions]) node.hidden = true;
  for (const node of [refs.title, refs.count]) node.hidden = false;
}

function becomeRow(element, trash) {
  const kind = trash ? 'trash' : state.fleet ? 'fleet-row' : 'row';
  if (element.kind === kind) return;
  element.kind = kind;
  element.className = 'row';
  const refs = element.refs;
  refs.shown = {};
  for (const node of [refs.title, refs.count, refs.rename]) node.hidden = true;
  for (const node of [refs.icon, refs.main, refs.actions]) node.hidden = false;
  if (trash) {
    refs.actions.replaceChildren(refs.restore, refs.cleanup);
  } else {
    refs.actions.replaceChildren(...rowActions().map(([action]) => refs.buttons[action]), refs.more);
  }
}

function renderListElement(element, index) {
  const item = state.items[index];
  if (!item) return;
  const refs = element.refs;
  element.id = `list-row-${index}`;
  setFlag(refs, 'focus', (on) => element.classList.toggle('active-row', on), index === state.focus);
  if (item.header) {
    becomeSection(element);
    element.dataset.section = String(item.section);
    delete element.dataset.gid;
    setText(refs, 'title', refs.title, item.title || '(untitled)');
    setText(refs, 'count', refs.count, String(item.count));
    setFlag(refs, 'rename', (on) => (refs.rename.hidden = !on), state.view.sortType === 'manual');
    return;
  }
  becomeRow(element, false);
  setFlag(refs, 'placeholder', (on) => {
    element.classList.toggle('placeholder-row', on);
    refs.actions.hidden = on;
  }, Boolean(item.placeholder));
  if (item.placeholder) {
    delete element.dataset.gid;
    renderRow(refs, PLACEHOLDER_ROW);
    return;
  }
  const row = state.rows.get(item.gid);
  element.dataset.gid = item.gid;
  element.dataset.section = String(item.section);
  setFlag(refs, 'handle', (on) => {
    refs.handle.hidden = !on;
    element.classList.toggle('no-handle', !on);
  }, state.view.sortType === 'manual');
  renderRow(refs, row);
  const status = row.status;
  setFlag(refs, 'pause', (on) => (refs.buttons.pause.hidden = !on), status === 'active' || status === 'waiting');
  setFlag(refs, 'resume', (on) => (refs.buttons.resume.hidden = !on), !(status === 'active' || status === 'waiting'));
  setFlag(refs, 'resume-enabled', (on) => (refs.buttons.resume.disabled = !on), status === 'paused' || status === 'error');
  setFlag(refs, 'stop', (on) => (refs.buttons.stop.disabled = !on), status === 'active' || status === 'waiting');
  setFlag(refs, 'remove', (on) => (refs.buttons.remove.disabled = !on), status !== 'removed');
  setFlag(refs, 'error', (on) => (refs.buttons.error.hidden = !on), status === 'error');
}

function renderTrashElement(element, index) {
  const row = state.trash[index];
  if (!row) return;
  const refs = element.refs;
  becomeRow(element, true);
  element.id = `trash-row-${index}`;
  element.dataset.gid = row.gid;
  setFlag(refs, 'focus', (on) => element.classList.toggle('active-row', on), index === state.trashFocus);
  setFlag(refs, 'handle', (on) => {
    refs.handle.hidden = !on;
    element.classList.toggle('no-handle', !on);
  }, false);
  renderRow(refs, row);
}

const STATUS_TITLES = {
  active: 'Downloading',
  waiting: 'Waiting',
  paused: 'Paused',
  error: 'Failed',
  complete: 'Done',
  removed: 'In the trash',
};

/** What a row shows until a partial view's left-out rows come: no name, no thumbnail. */
const PLACEHOLDER_ROW = { gid: '', name: '…', status: '', total: 0, done: 0, kind: 'Other', speed: 0 };

function renderRow(refs, row) {
  setText(refs, 'name', refs.name, row.name);
  if (refs.shown.url !== row.url) {
    refs.shown.url = row.url;
    refs.name.title = row.url || '';
  }
  setText(refs, 'kind', refs.kind, (row.kind || 'other').slice(0, 3));
  setText(refs, 'status', refs.status, STATUS_TITLES[row.status] || row.status);
  setFlag(refs, 'statusClass', (name) => (refs.status.className = `status status-${name}`), row.status);
  setText(refs, 'percent', refs.percent, format.percent(row.done, row.total));
  const active = row.status === 'active';
  setText(refs, 'speed', refs.speed, active ? format.speed(row.speed) : '');
  setText(refs, 'eta', refs.eta, active ? format.remaining(row.done, row.total, row.speed) : '');
  // Who downloads it, on a fleet service: the holder's host and process (its owner name
  // without the random part).
  setText(refs, 'holder', refs.holder, active && row.holder ? `on ${row.holder.replace(/:[0-9]+$/, '')}` : '');
  setText(refs, 'size', refs.size, row.total > 0 ? `${format.bytes(row.done)} of ${format.bytes(row.total)}` : format.bytes(row.done));
  const fraction = row.status === 'complete' ? 1 : row.total > 0 ? Math.min(1, row.done / row.total) : 0;
  setFlag(refs, 'fill', (value) => (refs.fill.style.transform = `scaleX(${value})`), fraction);
  setFlag(refs, 'done', (on) => refs.bar.classList.toggle('done', on), row.status === 'complete');
  const thumbnail = row.gid ? thumbnailFor(row) : null;
  setFlag(refs, 'thumbnail', (source) => {
    refs.image.hidden = !source;
    refs.kind.hidden = Boolean(source);
    if (source) refs.image.src = source;
    else refs.image.removeAttribute('src');
  }, thumbnail);
}

// MARK: Thumbnails

const thumbnails = new Map();
const thumbnailQueue = [];
let thumbnailsInFlight = 0;

/** The object URL of a row's thumbnail, or null while it comes (the kind badge shows). */
function thumbnailFor(row) {
  const key = `${row.gid}:${row.status === 'complete'}`;
  const known = thumbnails.get(key);
  if (known !== undefined) return known || null;
  thumbnails.set(key, '');
  thumbnailQueue.push([key, row.gid]);
  pumpThumbnails();
  return null;
}

function pumpThumbnails() {
  while (thumbnailsInFlight < 4 && thumbnailQueue.length > 0) {
    const [key, gid] = thumbnailQueue.shift();
    thumbnailsInFlight += 1;
    const headers = state.secret === null ? {} : { Authorization: `Bearer ${state.secret}` };
    fetch(`/thumbnail/${encodeURIComponent(gid)}?height=72`, { headers, cache: 'no-store', credentials: 'omit' })
      .then((response) => (response.ok ? response.blob() : null))
      .then((blob) => {
        if (blob) {
          thumbnails.set(key, URL.createObjectURL(blob));
          listView.schedule();
          if (state.tab === 'trash') trashView.schedule();
        }
      })
      .catch(() => {})
      .finally(() => {
        thumbnailsInFlight -= 1;
        pumpThumbnails();
      });
  }
}

// MARK: URLs (not in the list's answer: asked for when a row is pointed at or opened)

async function urlOf(row) {
  if (row.url === undefined && !row.askedURL) {
    row.askedURL = true;
    const uris = await attempt(() => state.client.call('aria2.getUris', row.gid));
    if (Array.isArray(uris) && uris[0]) row.url = uris[0].uri;
    listView.schedule();
  }
  return row.url;
}

$('list-scroller').addEventListener('pointerover', (event) => {
  const element = event.target.closest('.row[data-gid]');
  const row = element && state.rows.get(element.dataset.gid);
  if (row) urlOf(row);
});

// MARK: Actions

$('list-scroller').addEventListener('click', (event) => {
  const button = event.target.closest('button[data-action]');
  const element = event.target.closest('[data-index]');
  if (!element) return;
  const index = Number(element.dataset.index);
  setFocus(index);
  if (button) perform(button.dataset.action, state.items[index], button);
});

$('trash-scroller').addEventListener('click', (event) => {
  const button = event.target.closest('button[data-action]');
  const element = event.target.closest('[data-index]');
  if (!element) return;
  const index = Number(element.dataset.index);
  state.trashFocus = index;
  trashView.schedule();
  if (button) performTrash(button.dataset.action, state.trash[index]);
});

async function perform(action, item, anchor) {
  if (!item || item.placeholder) return;
  const client = state.client;
  if (item.header) {
    if (action === 'rename') {
      const title = await askTitle('Rename the section', item.title);
      if (title !== null) await changeList('peregrine.renameSection', item.section, title, state.list);
    }
    return;
  }
  const gid = item.gid;
  const row = state.rows.get(gid);
  switch (action) {
    case 'pause':
      await attempt(() => client.call('aria2.pause', gid));
      break;
    case 'resume':
      await attempt(() =>
        row && row.status === 'error' ? client.call('peregrine.restart', gid) : client.call('aria2.unpause', gid),
      );
      break;
    case 'stop':
      await attempt(() => client.call('peregrine.stop', gid));
      break;
    case 'restart':
      await attempt(() => client.call('peregrine.restart', gid));
      break;
    case 'trash':
      await attempt(() => client.call('peregrine.trash', gid));
      await loadList();
      return;
    case 'remove': {
      // An ended task leaves the queue as a result does (its file stays where it was downloaded).
      const ended = row && (row.status === 'complete' || row.status === 'error');
      const question = ended ? ' (its file stays)' : '';
      if (!window.confirm(`Remove “${row ? row.name : gid}” from the fleet's queue${question}?`)) return;
      await attempt(() => client.call(ended ? 'aria2.removeDownloadResult' : 'aria2.remove', gid));
      await loadList();
      return;
    }
    case 'delete':
      if (!window.confirm(`Delete “${row ? row.name : gid}” and its file for good?`)) return;
      await attempt(() => client.call('peregrine.delete', gid));
      await loadList();
      return;
    case 'error': {
      const status = await attempt(() => client.call('aria2.tellStatus', gid, ['errorCode', 'errorMessage', 'status']));
      if (status) showText(`Error of ${row ? row.name : gid}`, `${status.errorMessage || 'No message.'} (code ${status.errorCode || '?'})`);
      return;
    }
    case 'more':
      openMenu(anchor, item);
      return;
    default:
      return;
  }
  markChanged(gid);
}

async function performTrash(action, row) {
  if (!row) return;
  if (action === 'restore') await attempt(() => state.client.call('peregrine.untrash', row.gid));
  if (action === 'cleanup') {
    if (!window.confirm(`Delete “${row.name}” and its file for good?`)) return;
    await attempt(() => state.client.call('peregrine.cleanUp', row.gid));
  }
  await loadTrash();
}

$('trash-empty').addEventListener('click', async () => {
  if (!window.confirm('Delete everything in the trash, with the files, for good?')) return;
  await attempt(() =>
    state.list === ''
      ? state.client.call('peregrine.emptyTrash')
      : state.client.multicall(state.trash.map((row) => ['peregrine.cleanUp', row.gid])),
  );
  await loadTrash();
});

// The secondary actions at narrow widths.
let menu = null;
function openMenu(anchor, item) {
  closeMenu();
  const row = state.rows.get(item.gid);
  menu = document.createElement('div');
  menu.className = 'menu';
  menu.setAttribute('role', 'menu');
  for (const [action, label] of rowActions()) {
    const status = row ? row.status : '';
    if (action === 'pause' && !(status === 'active' || status === 'waiting')) continue;
    // As the row's own button: resume what is paused or failed, nothing else.
    if (action === 'resume' && !(status === 'paused' || status === 'error')) continue;
    if (action === 'error' && status !== 'error') continue;
    const button = document.createElement('button');
    button.type = 'button';
    button.setAttribute('role', 'menuitem');
    button.textContent = label;
    button.addEventListener('click', () => {
      closeMenu();
      perform(action, item);
    });
    menu.append(button);
  }
  document.body.append(menu);
  const box = anchor.getBoundingClientRect();
  menu.style.top = `${Math.min(box.bottom + 4, window.innerHeight - menu.offsetHeight - 8)}px`;
  menu.style.left = `${Math.max(8, box.right - menu.offsetWidth)}px`;
  menu.addEventListener('keydown', (event) => {
    const items = [...menu.querySelectorAll('button')];
    const index = items.indexOf(document.activeElement);
    if (event.key === 'Escape') {
      closeMenu();
      anchor.focus();
    } else if (event.key === 'ArrowDown') {
      items[(index + 1) % items.length].focus();
      event.preventDefault();
    } else if (event.key === 'ArrowUp') {
      items[(index + items.length - 1) % items.length].focus();
      event.preventDefault();
    }
  });
  menu.querySelector('button').focus();
}
function closeMenu() {
  if (menu) menu.remove();
  menu = null;
}
document.addEventListener('pointerdown', (event) => {
  if (menu && !menu.contains(event.target)) closeMenu();
});

// MARK: Dialogs

function showText(title, body) {
  $('text-dialog-title').textContent = title;
  $('text-dialog-body').textContent = body;
  $('text-dialog').showModal();
}

function askTitle(heading, value) {
  return new Promise((resolve) => {
    const dialog = $('title-dialog');
    $('title-dialog-title').textContent = heading;
    $('title-input').value = value;
    const done = (result) => {
      dialog.removeEventListener('close', onClose);
      $('title-form').removeEventListener('submit', onSubmit);
      $('title-cancel').removeEventListener('click', onCancel);
      resolve(result);
    };
    const onSubmit = (event) => {
      event.preventDefault();
      const title = $('title-input').value.trim();
      dialog.close();
      done(title === '' ? null : title);
    };
    const onCancel = () => {
      dialog.close();
    };
    const onClose = () => done(null);
    dialog.addEventListener('close', onClose);
    $('title-form').addEventListener('submit', onSubmit);
    $('title-cancel').addEventListener('click', onCancel);
    dialog.showModal();
    $('title-input').select();
  });
}

// MARK: Keyboard

function setFocus(index) {
  if (state.items.length === 0) return;
  state.focus = Math.max(0, Math.min(state.items.length - 1, index));
  $('list-scroller').setAttribute('aria-activedescendant', `list-row-${state.focus}`);
  listView.reveal(state.focus);
}

$('list-scroller').addEventListener('keydown', (event) => {
  if (event.target !== $('list-scroller')) return;
  const page = Math.max(1, Math.floor(listView.viewHeight / ROW_HEIGHT) - 1);
  const item = state.items[state.focus];
  const manual = state.view && state.view.sortType === 'manual';
  let handled = true;
  if (event.altKey && (event.key === 'ArrowUp' || event.key === 'ArrowDown') && manual && item && !item.header) {
    moveByKeyboard(item, event.key === 'ArrowUp' ? -1 : 1);
  } else if (event.key === 'ArrowDown') setFocus(state.focus + 1);
  else if (event.key === 'ArrowUp') setFocus(state.focus - 1);
  else if (event.key === 'PageDown') setFocus(state.focus + page);
  else if (event.key === 'PageUp') setFocus(state.focus - page);
  else if (event.key === 'Home') setFocus(0);
  else if (event.key === 'End') setFocus(state.items.length - 1);
  else if (item && event.key === ' ') {
    const row = state.rows.get(item.gid);
    if (row) perform(row.status === 'active' || row.status === 'waiting' ? 'pause' : 'resume', item);
  } else if (item && event.key === 'Delete') perform(state.fleet ? 'remove' : event.shiftKey ? 'delete' : 'trash', item);
  else if (item && event.key === 'Enter') {
    if (item.header) perform('rename', item);
    else {
      const row = state.rows.get(item.gid);
      if (row && row.status === 'error') perform('error', item);
      else if (row) {
        urlOf(row).then((url) => showText(row.name, `${url || ''}\n${STATUS_TITLES[row.status] || row.status}`));
      }
    }
  } else if (item && !item.header && !state.fleet && (event.key === 'r' || event.key === 's')) {
    perform(event.key === 'r' ? 'restart' : 'stop', item);
  } else handled = false;
  if (handled) event.preventDefault();
});

$('trash-scroller').addEventListener('keydown', (event) => {
  if (event.target !== $('trash-scroller')) return;
  const row = state.trash[state.trashFocus];
  let handled = true;
  if (event.key === 'ArrowDown') state.trashFocus = Math.min(state.trash.length - 1, state.trashFocus + 1);
  else if (event.key === 'ArrowUp') state.trashFocus = Math.max(0, state.trashFocus - 1);
  else if (row && event.key === 'Enter') performTrash('restore', row);
  else if (row && event.key === 'Delete') performTrash('cleanup', row);
  else handled = false;
  if (handled) {
    event.preventDefault();
    $('trash-scroller').setAttribute('aria-activedescendant', `trash-row-${state.trashFocus}`);
    trashView.reveal(state.trashFocus);
  }
});

// MARK: Manual moves (drag a row's handle, or Alt+↑/↓)

/** Where a row ends up when dropped before the list entry at `targetIndex` (or at the end). */
function destination(item, targetIndex) {
  const target = state.items[targetIndex];
  const sections = state.view.sections;
  if (!target) {
    const last = sections.length - 1;
    const count = sections[last].downloads.length;
    return { section: last, item: last === item.section ? count - 1 : count };
  }
  if (target.header) {
    // Before a section's title: the end of the section above, or the top of the first.
    if (target.section === 0) return { section: 0, item: 0 };
    const above = target.section - 1;
    const count = sections[above].downloads.length;
    return { section: above, item: above === item.section ? count - 1 : count };
  }
  if (target.section === item.section && target.item > item.item) return { section: target.section, item: target.item - 1 };
  return { section: target.section, item: target.item };
}

async function moveTo(item, to) {
  if (to.section === item.section && to.item === item.item) return;
  await attempt(() => state.client.call('peregrine.moveTask', item.gid, to.section, to.item, state.list));
  await loadList();
}

async function moveByKeyboard(item, delta) {
  // Moves need every row's place: not while only the first rows have come.
  if (state.view.complete === false || item.placeholder) return;
  const sections = state.view.sections;
  let to;
  if (delta < 0) {
    if (item.item > 0) to = { section: item.section, item: item.item - 1 };
    else if (item.section > 0) to = { section: item.section - 1, item: sections[item.section - 1].downloads.length };
  } else if (item.item < sections[item.section].downloads.length - 1) {
    to = { section: item.section, item: item.item + 1 };
  } else if (item.section < sections.length - 1) to = { section: item.section + 1, item: 0 };
  if (!to) return;
  await moveTo(item, to);
  const index = state.items.findIndex((entry) => entry.gid === item.gid);
  if (index >= 0) setFocus(index);
}

$('list-scroller').addEventListener('pointerdown', (event) => {
  const handle = event.target.closest('.handle');
  if (!handle || handle.hidden || event.button !== 0) return;
  const element = handle.closest('[data-index]');
  const item = state.items[Number(element.dataset.index)];
  if (!item || item.header || item.placeholder || state.view.complete === false) return;
  event.preventDefault();
  element.classList.add('dragging');
  state.dragging = { item, element, target: null, pointer: event.pointerId };
  $('list-scroller').setPointerCapture(event.pointerId);
});

function dropTargetAt(x, y) {
  const scroller = $('list-scroller');
  const box = scroller.getBoundingClientRect();
  if (y > box.bottom) return state.items.length;
  const index = Math.floor((y - box.top + scroller.scrollTop) / ROW_HEIGHT);
  return Math.max(0, Math.min(state.items.length, index));
}

$('list-scroller').addEventListener('pointermove', (event) => {
  const drag = state.dragging;
  if (!drag) return;
  const scroller = $('list-scroller');
  const box = scroller.getBoundingClientRect();
  if (event.clientY < box.top + 24) scroller.scrollTop -= ROW_HEIGHT / 2;
  else if (event.clientY > box.bottom - 24) scroller.scrollTop += ROW_HEIGHT / 2;
  const index = dropTargetAt(event.clientX, event.clientY);
  if (drag.target === index) return;
  if (drag.marked) drag.marked.classList.remove('drop-before');
  drag.target = index;
  drag.marked = listView.elementAt(index);
  if (drag.marked) drag.marked.classList.add('drop-before');
});

async function endDrag(event, cancelled) {
  const drag = state.dragging;
  if (!drag) return;
  state.dragging = null;
  drag.element.classList.remove('dragging');
  if (drag.marked) drag.marked.classList.remove('drop-before');
  if (cancelled) return;
  const index = dropTargetAt(event.clientX, event.clientY);
  await moveTo(drag.item, destination(drag.item, index));
}

$('list-scroller').addEventListener('pointerup', (event) => endDrag(event, false));
$('list-scroller').addEventListener('pointercancel', (event) => endDrag(event, true));

// MARK: Adding

$('add-toggle').addEventListener('click', () => {
  const form = $('add-form');
  form.hidden = !form.hidden;
  $('add-toggle').setAttribute('aria-expanded', String(!form.hidden));
  if (!form.hidden) {
    $('add-list').value = state.list;
    renderToolbar();
    $('add-uris').focus();
  }
});
$('add-list').addEventListener('input', () => state.view && renderToolbar());

$('add-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const uris = $('add-uris').value.split(/\s+/).filter((uri) => uri !== '');
  if (uris.length === 0) return;
  const options = { list: $('add-list').value.trim(), pause: $('add-paused').checked };
  const checksum = $('add-checksum').value.trim();
  if (checksum !== '') options.checksum = checksum;
  const choice = $('add-section-choice');
  if (!choice.disabled && choice.value !== '') options.section = Number(choice.value);
  $('add-submit').disabled = true;
  const results = await attempt(() => state.client.call('peregrine.addUris', uris, options));
  $('add-submit').disabled = false;
  if (!results) return;
  const refused = results.filter((result) => result.error);
  if (refused.length > 0) {
    showError(refused.map((result) => `${result.uri}: ${result.error}`).join('\n'));
    $('add-uris').value = refused.map((result) => result.uri).join('\n');
  } else {
    $('add-uris').value = '';
    $('add-checksum').value = '';
  }
  if (options.list !== state.list && !state.lists.includes(options.list)) {
    const lists = await attempt(() => state.client.call('peregrine.lists'));
    if (lists) state.lists = lists;
    renderTabs();
  }
  await loadList();
});

// MARK: Limits

function showLimits(options) {
  $('max-concurrent').value = options['max-concurrent-downloads'] || '';
  $('max-speed').value = format.formatLimit(options['max-overall-download-limit'] || '0');
}

$('limits').addEventListener('submit', async (event) => {
  event.preventDefault();
  const count = Number($('max-concurrent').value);
  const limit = format.parseLimit($('max-speed').value || '0');
  if (!Number.isInteger(count) || count < 1) {
    showError('Downloads at once: a whole number, at least 1.');
    return;
  }
  if (limit === null) {
    showError('Speed limit: a number of bytes per second, or with K or M (512K, 2M); 0 for none.');
    return;
  }
  const done = await attempt(() =>
    state.client.call('aria2.changeGlobalOption', {
      'max-concurrent-downloads': String(count),
      'max-overall-download-limit': String(limit),
    }),
  );
  if (done === undefined) return;
  const options = await attempt(() => state.client.call('aria2.getGlobalOption'));
  if (options) showLimits(options);
});

// MARK: Live updates

function onNotification(method, gid) {
  if (!method.startsWith('aria2.onDownload')) return;
  markChanged(gid);
}

/** Asks for one download's status soon (batched with the others that changed). */
function markChanged(gid) {
  state.pending.add(gid);
  if (state.flushTimer) return;
  state.flushTimer = setTimeout(() => {
    state.flushTimer = 0;
    update(false);
  }, 50);
}

function tick() {
  clearTimeout(state.tickTimer);
  update(true).finally(() => {
    if (state.client) state.tickTimer = setTimeout(tick, 1000);
  });
}

/**
 * One round of updates: the downloads that changed (tellStatus each), and on the second's tick
 * the active ones, the global figures and the lists' revision. Never the whole list.
 */
async function update(everySecond) {
  if (!state.client) return;
  const changed = [...state.pending];
  state.pending.clear();
  const calls = changed.map((gid) => ['aria2.tellStatus', gid, STATUS_KEYS]);
  if (everySecond) calls.push(['aria2.tellActive', STATUS_KEYS], ['aria2.getGlobalStat'], ['peregrine.listRevision']);
  if (calls.length === 0) return;
  let answers;
  try {
    answers = await state.client.multicall(calls);
  } catch (error) {
    if (error.code !== 0) showError(error);
    return;
  }
  const began = performance.now();
  let structural = false;
  changed.forEach((gid, index) => {
    const status = answers[index];
    if (status instanceof RPCError) structural = true;
    else if (applyStatus(status)) structural = true;
  });
  if (everySecond) {
    const [active, stat, revision] = answers.slice(changed.length);
    if (Array.isArray(active)) {
      const now = new Set();
      for (const status of active) {
        now.add(status.gid);
        applyStatus(status);
      }
      // Those no longer active changed without a notification reaching us (yet): ask.
      for (const gid of state.active) if (!now.has(gid)) state.pending.add(gid);
      state.active = now;
    }
    if (stat && !(stat instanceof RPCError)) showGlobal(stat);
    if (typeof revision === 'number' && revision !== state.revision) {
      state.revision = revision;
      structural = true;
    }
  }
  if (structural) {
    if (state.tab === 'list') loadList();
    else loadTrash();
  } else {
    listView.schedule();
  }
  const spent = performance.now() - began;
  metrics.updates += 1;
  metrics.longestUpdate = Math.max(metrics.longestUpdate, spent);
}

/** Applies a status to its row; true when the list must be asked for again. */
function applyStatus(status) {
  const row = state.rows.get(status.gid);
  if (!row) return state.tab === 'list';
  if (status.status === 'removed' && row.status !== 'removed') return true;
  row.status = status.status;
  row.total = Number(status.totalLength) || row.total;
  row.done = Number(status.completedLength) || 0;
  row.speed = Number(status.downloadSpeed) || 0;
  // A row loaded while its task waited learns its holder here, once a service claims it.
  if (state.fleet) row.holder = status['peregrine.holder'] || '';
  if (row.status === 'active') state.active.add(row.gid);
  return false;
}

function showGlobal(stat) {
  $('num-active').textContent = stat.numActive;
  $('num-waiting').textContent = stat.numWaiting;
  $('num-stopped').textContent = stat.numStopped;
  $('speed-total').textContent = format.speed(Number(stat.downloadSpeed));
  graph.add(Number(stat.downloadSpeed));
}

// A bookmark with #secret=… opened over a page already showing: sign in with it.
window.addEventListener('hashchange', () => {
  if (new URLSearchParams(location.hash.slice(1)).has('secret')) {
    if (state.client) signOut('');
    start();
  }
});

start();
