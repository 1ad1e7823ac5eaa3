// A classic script the page runs before its modules: the list's first rows are asked for now,
// while the modules load (app.js takes the answer: see fetchView), so the first frame does not
// wait for the two one after the other. The secret is the one app.js will sign in with (the
// URL fragment's, else this tab's); it goes in the request's body, as app.js sends it, never in
// a URL. The rows: four screenfuls of 56 px (app.js's ROW_HEIGHT).
(() => {
  const secret = new URLSearchParams(location.hash.slice(1)).get('secret') ?? sessionStorage.getItem('peregrine.secret');
  const rows = 4 * Math.ceil(Math.max(window.innerHeight, 1080) / 56);
  const params = secret === null ? ['', rows] : [`token:${secret}`, '', rows];
  window.peregrineFirstView = {
    secret,
    rows,
    requested: performance.now(),
    answer: fetch('/jsonrpc', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'peregrine.listView', params }),
      cache: 'no-store',
      credentials: 'omit',
    }).then((response) => response.text().then((text) => ({ status: response.status, text }))),
  };
  window.peregrineFirstView.answer.catch(() => {});
})();
