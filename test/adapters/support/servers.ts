import { once } from "node:events";
import { createServer, type RequestListener, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import type { Send } from "./suite.js";

export interface Running {
  readonly baseUrl: string;
  readonly send: Send;
  close(): Promise<void>;
}

/** Serves on 127.0.0.1 on a free port. */
export async function listen(listener: RequestListener | Server): Promise<Running> {
  const server = typeof listener === "function" ? createServer(listener) : listener;
  if (!server.listening) {
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
  }
  return running(server);
}

export function running(server: Server): Running {
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    send: (path, init) => fetch(`${baseUrl}${path}`, init),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The addresses a Node server reports for a client on 127.0.0.1. */
export const LOOPBACK = /^from (127\.0\.0\.1|::ffff:127\.0\.0\.1)$/;

let refusesExtraFields: Promise<boolean> | undefined;
/**
 * Whether this Node refuses, in its HTTP/1 parser, a request with more header fields than
 * `server.maxHeadersCount` (a bare 431, no listener run: Node 22.23.2, 24.18.1, 26.5.1 and later;
 * review nodes-1), rather than cutting it to the first fields and running the listener (Node 20,
 * and earlier 22/24/26), which is where the adapters' own 431 `header_too_large` answers. A
 * feature test on a bare server, not a version number.
 */
export function nodeRefusesExtraHeaderFields(): Promise<boolean> {
  refusesExtraFields ??= (async () => {
    let ran = false;
    const bare = createServer((_request, response) => {
      ran = true;
      response.end();
    });
    bare.maxHeadersCount = 2;
    const running = await listen(bare);
    try {
      const { port } = bare.address() as AddressInfo;
      const status = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, "127.0.0.1");
        let text = "";
        socket.on("data", (chunk) => (text += chunk.toString("latin1")));
        socket.on("error", reject);
        socket.on("close", () => resolve(text.slice(9, 12)));
        socket.end("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\na:1\r\nb:1\r\nc:1\r\n\r\n");
      });
      // Either way the answer says which: a 200 from the listener, or the parser's 431.
      if (status !== (ran ? "200" : "431")) throw new Error(`unexpected answer ${status}`);
      return !ran;
    } finally {
      await running.close();
    }
  })();
  return refusesExtraFields;
}
