// The sidecar wire over the hub's WebSocket (/sidecar; docs/sidecar.md, "Sessions of a hub"): one command per
// frame out, frames of newline-separated lines in. The login cookie authenticates the upgrade (the page's own
// Origin goes with it); nothing here holds the token.

export class WireError extends Error {
  constructor(body) {
    super(body && body.message ? body.message : "the hub refused");
    this.kind = body && body.kind ? body.kind : "Unknown";
    this.body = body;
  }
}

export class Wire {
  /**
   * `handlers`: event(event), closed(sessionId), sessionError(sessionId, body), state("open" | "closed").
   */
  constructor(handlers) {
    this.handlers = handlers;
    this.socket = null;
    this.nextId = 1;
    this.pending = new Map();
  }

  /** Open the socket; resolves once the hub's hello is read, rejects if the socket closes first. */
  connect() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(`${scheme}//${location.host}/sidecar`);
    this.socket = socket;
    return new Promise((resolve, reject) => {
      let hello = false;
      socket.onmessage = (message) => {
        for (const text of String(message.data).split("\n")) {
          if (!text) continue;
          const line = JSON.parse(text);
          if (!hello) {
            hello = true;
            if (!line.hello || line.hello.protocol !== 1) {
              socket.close();
              reject(new Error("not the sidecar wire, protocol 1"));
              return;
            }
            this.handlers.state("open");
            resolve(line.hello);
            continue;
          }
          this.dispatch(line);
        }
      };
      socket.onclose = () => {
        for (const { reject: fail } of this.pending.values()) fail(new WireError({ kind: "Disconnected", message: "the connection to the hub closed" }));
        this.pending.clear();
        if (this.socket === socket) this.socket = null;
        if (!hello) reject(new Error("the hub did not take the connection"));
        else this.handlers.state("closed");
      };
    });
  }

  /** Send a command; resolves with its `ok`, rejects with a WireError carrying its error body. */
  call(cmd, fields = {}) {
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN) {
      return Promise.reject(new WireError({ kind: "Disconnected", message: "not connected to the hub" }));
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ id, cmd, ...fields }));
    });
  }

  close() {
    if (this.socket) this.socket.close();
  }

  dispatch(line) {
    if (typeof line.id === "number" && this.pending.has(line.id)) {
      const waiter = this.pending.get(line.id);
      this.pending.delete(line.id);
      if ("error" in line) waiter.reject(new WireError(line.error));
      else waiter.resolve(line.ok);
    } else if (line.event) {
      this.handlers.event(line.event);
    } else if (typeof line.session === "string" && line.error) {
      this.handlers.sessionError(line.session, line.error);
    } else if (typeof line.closed === "string") {
      this.handlers.closed(line.closed);
    } else if (line.error) {
      console.warn("the hub refused a frame", line.error);
    }
  }
}
