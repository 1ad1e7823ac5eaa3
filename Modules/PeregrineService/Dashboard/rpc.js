// The service's JSON-RPC (aria2's, plus peregrine.*): calls over HTTP POST to /jsonrpc with the
// secret as the first parameter ("token:…", never in a URL), notifications over the WebSocket.

/** An error the service answered, or a failure to reach it (code 0). */
export class RPCError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

export class RPCClient {
  /** `secret` is null when the service has none. */
  constructor(secret) {
    this.secret = secret;
    this.nextID = 1;
  }

  withToken(params) {
    return this.secret === null ? params : [`token:${this.secret}`, ...params];
  }

  async post(body) {
    let response;
    try {
      response = await fetch('/jsonrpc', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
        cache: 'no-store',
        credentials: 'omit',
      });
    } catch (error) {
      throw new RPCError(0, `The service cannot be reached (${error.message}).`);
    }
    let answer;
    try {
      answer = await response.json();
    } catch {
      throw new RPCError(response.status, `The service answered HTTP ${response.status}.`);
    }
    if (answer.error) throw new RPCError(answer.error.code, answer.error.message);
    return answer.result;
  }

  /** Calls one method; throws an RPCError with the service's message. */
  call(method, ...params) {
    return this.post({ jsonrpc: '2.0', id: this.nextID++, method, params: this.withToken(params) });
  }

  /**
   * Calls several methods in one request (system.multicall): `calls` is [[method, ...params]];
   * answers, in order, a value or an RPCError per call.
   */
  async multicall(calls) {
    if (calls.length === 0) return [];
    const entries = calls.map(([method, ...params]) => ({ methodName: method, params: this.withToken(params) }));
    const answers = await this.post({ jsonrpc: '2.0', id: this.nextID++, method: 'system.multicall', params: [entries] });
    return answers.map((answer) => (Array.isArray(answer) ? answer[0] : new RPCError(answer.code, answer.message)));
  }
}

/**
 * The WebSocket of notifications (aria2.onDownloadStart, …): calls `onNotification(method, gid)`,
 * `onState(live)` when the connection opens or drops; reconnects with a growing delay.
 */
export class NotificationSocket {
  constructor(onNotification, onState) {
    this.onNotification = onNotification;
    this.onState = onState;
    this.delay = 500;
    this.closed = false;
    this.socket = null;
  }

  open() {
    if (this.closed) return;
    const scheme = location.protocol === 'https:' ? 'wss://' : 'ws://';
    const socket = new WebSocket(`${scheme}${location.host}/jsonrpc`);
    this.socket = socket;
    socket.addEventListener('open', () => {
      this.delay = 500;
      this.onState(true);
    });
    socket.addEventListener('message', (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      const gid = message && Array.isArray(message.params) && message.params[0] && message.params[0].gid;
      if (typeof message.method === 'string' && typeof gid === 'string') this.onNotification(message.method, gid);
    });
    socket.addEventListener('close', () => {
      this.onState(false);
      if (this.closed) return;
      setTimeout(() => this.open(), this.delay);
      this.delay = Math.min(this.delay * 2, 10000);
    });
  }

  close() {
    this.closed = true;
    if (this.socket) this.socket.close();
  }
}
