import { once } from "node:events";
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
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
