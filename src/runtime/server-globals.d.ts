/**
 * The few Deno and Bun APIs the server entries use (src/runtime/deno.ts, bun.ts), declared here so that
 * `tsc` checks them without either runtime's full type package (neither is installed for Workers builds).
 */
declare namespace Deno {
  type NetAddr = { hostname: string; port: number };
  type HttpServer = { shutdown(): Promise<void>; finished: Promise<void> };
  type ServeOptions = { port?: number; hostname?: string; onListen?: (addr: NetAddr) => void };
  type ServeHandlerInfo = { remoteAddr: NetAddr };
  type Signal = "SIGTERM" | "SIGINT" | "SIGUSR2";
}
declare const Deno: {
  env: { toObject(): Record<string, string>; get(name: string): string | undefined };
  readTextFile(path: string): Promise<string>;
  serve(
    options: Deno.ServeOptions,
    handler: (request: Request, info: Deno.ServeHandlerInfo) => Response | Promise<Response>,
  ): Deno.HttpServer;
  cron(name: string, schedule: string, handler: () => Promise<void> | void): Promise<void>;
  addSignalListener(signal: Deno.Signal, handler: () => void): void;
  exit(code?: number): never;
};

declare namespace Bun {
  type Server = {
    hostname: string;
    port: number;
    stop(closeActiveConnections?: boolean): Promise<void>;
    requestIP(request: Request): { address: string; port: number } | null;
  };
}
declare const Bun: {
  env: Record<string, string | undefined>;
  file(path: string): { text(): Promise<string> };
  serve(options: {
    port?: number;
    hostname?: string;
    idleTimeout?: number;
    fetch(request: Request, server: Bun.Server): Response | Promise<Response>;
  }): Bun.Server;
};
